"""`topo apply FILE|PLAN.json`: make the live clusters match the topology, step by step.

With a topology file it plans, shows the plan and asks before changing anything. With a saved
plan it re-reads the clusters first and refuses when anything the plan was computed from has
changed since (a stale plan); then it executes exactly the saved changes, never re-deciding.
"""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from topology import apply as applying
from topology.apply import Outcome
from topology.errors import TopoError
from topology.plan.model import Change, Plan, Resource

if TYPE_CHECKING:
    from topology.cli.live import Loaded
    from topology.spark.launch import Submission

Configs = dict[str, dict[str, str]]


class StalePlanError(TopoError):
    """The clusters or the topology changed after the saved plan was made."""


EXIT_INTERRUPTED = 130


def apply(
    target: Annotated[
        str, typer.Argument(help="A topology file, or a plan saved by `topo plan -o`.")
    ],
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Apply without asking for confirmation.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what apply would do, in order; change nothing.")
    ] = False,
    allow_delete: Annotated[
        bool,
        typer.Option(
            "--allow-delete", help="Also delete topics and ACLs topo made that no flow needs."
        ),
    ] = False,
    once: Annotated[
        bool,
        typer.Option(
            "--once",
            help="Replicate what the sources hold now, then stop and return (migration, "
            "backfill). Without it replication runs on, in the background.",
        ),
    ] = False,
) -> None:
    """Apply a topology (plan, confirm, execute) or a saved plan (check it is current, execute)."""
    from topology.cli.files import read_text
    from topology.plan import saved

    text = read_text(target)
    if saved.looks_like_plan(text):
        if allow_delete:
            raise TopoError(
                "--allow-delete is decided when planning; it is recorded in the saved plan"
            )
        plan, configs, loaded = _current_saved_plan(text, target, once)
    else:
        plan, configs, loaded = _fresh_plan(target, allow_delete, once)
        if plan.empty and not once:
            raise typer.Exit(0)
        if not (dry_run or auto_approve):
            _confirm()
    if dry_run:
        _dry_run(plan)
        raise typer.Exit(0)
    _refuse_without_engine(plan, loaded, once)
    jobs = _Jobs(loaded, once)
    _execute(plan, configs, jobs)
    if once:
        raise typer.Exit(jobs.copy_once())


def _fresh_plan(file: str, allow_delete: bool, once: bool) -> tuple[Plan, Configs, "Loaded"]:
    from topology.cli import live
    from topology.cli.plan import Format, render

    loaded = live.load(file)
    if once:
        _refuse_once(loaded)
    configs = live.client_configs(loaded)
    plan = live.make_plan(loaded, live.observe(configs), allow_delete)
    typer.echo(render(plan.to_dict(), Format.TEXT), nl=False)
    return plan, configs, loaded


def _current_saved_plan(text: str, file: str, once: bool) -> tuple[Plan, Configs, "Loaded"]:
    from topology.cli import live
    from topology.plan import saved

    plan = saved.read(text, file)
    loaded = live.load(_topology_of(plan, file))
    if loaded.sha256 != plan.topology_sha256:
        raise StalePlanError(
            f"stale plan: {plan.topology_file} changed after {file} was made; plan again"
        )
    if once:
        _refuse_once(loaded)
    configs = live.client_configs(loaded)
    current = live.make_plan(loaded, live.observe(configs), plan.allow_delete)
    if current.fingerprint != plan.fingerprint:
        now = ", ".join(f"{n} to {action}" for action, n in current.summary().items() if n)
        raise StalePlanError(
            f"stale plan: the clusters changed after {file} was made (a plan now would have "
            f"{now or 'no changes'}); plan again"
        )
    typer.echo(f"{file} is current: the clusters are as it expects.", err=True)
    return plan, configs, loaded


def _topology_of(plan: Plan, plan_file: str) -> str:
    """The topology the plan was made from: as it was named when planning (from the folder
    planning ran in), else next to the saved plan."""
    named = Path(plan.topology_file)
    beside = Path(plan_file).parent / named
    if named.is_absolute() or named.exists() or not beside.exists():
        return plan.topology_file
    return str(beside)


def _refuse_without_engine(plan: Plan, loaded: "Loaded", once: bool) -> None:
    """Replication needs the `spark` extra: say so before the first change, not halfway. A
    flow change (re)starts the driver with every flow the topology has; with none left it only
    stops the running one, which needs no Spark."""
    from topology.jobs import specs_of
    from topology.spark import installed

    flows = sum(1 for change in plan.changes if change.resource is Resource.FLOW)
    if once:
        installed.require("topo apply --once")
    elif flows and specs_of(loaded.topology):
        installed.require(
            f"this plan starts replication ({flows} flow change(s)); that",
            " (nothing was changed; to apply only topics, configs, partitions and ACLs, set "
            "`engine: {runner: none}` in the topology)",
        )


def _refuse_once(loaded: "Loaded") -> None:
    """--once runs the jobs here: not when none are configured, nor beside a running driver."""
    from topology.cli import live

    if loaded.topology.engine.runner == "none":
        raise TopoError("--once has nothing to run: this topology's engine runner is none")
    if live.running_specs(loaded):
        raise TopoError(
            f"replication of {loaded.topology.name} is running continuously; stop it first "
            f"(topo stop {loaded.file}): two jobs must not share a checkpoint"
        )


class _Jobs:
    """Executes the plan's flow changes: one driver runs every flow of a topology, so the first
    flow change (re)starts it with all the topology's jobs and the others are then done. With
    --once the flows are not started in the background: `copy_once` runs them after the plan."""

    def __init__(self, loaded: "Loaded", once: bool) -> None:
        self.loaded = loaded
        self.once = once
        self.handled = False

    def _submission(self) -> "Submission":
        from topology.cli import live

        return live.submission(self.loaded)

    def execute(self, change: Change) -> None:
        if self.handled or self.once:
            return
        from topology.spark import launch

        self.handled = True
        submission = self._submission()
        launch.stop(submission.owner, report=_progress)
        if submission.specs:
            launch.start(submission, report=_progress)

    def copy_once(self) -> int:
        from topology.spark import launch

        submission = self._submission()
        typer.echo(f"Copying what the sources hold now ({len(submission.specs)} flow(s)) ...",
                   err=True)  # fmt: skip
        code = launch.run_once(submission, report=_progress)
        typer.echo("Copy complete." if code == 0 else "Copy FAILED (see above).", err=True)
        return code


def _progress(line: str) -> None:
    typer.echo(f"  {line}", err=True)


def _confirm() -> None:
    if not sys.stdin.isatty():
        raise TopoError(
            "refusing to ask for confirmation: standard input is not a terminal; "
            "pass --auto-approve to apply without asking"
        )
    typer.echo("\nDo you want to apply these changes? Only 'yes' is accepted.", err=True)
    if input("  Enter a value: ").strip() != "yes":
        typer.echo("Apply cancelled; nothing was changed.", err=True)
        raise typer.Exit(1)


def _dry_run(plan: Plan) -> None:
    typer.echo(f"Dry run: apply would make these {len(plan.changes)} change(s), in this order:")
    for number, change in enumerate(plan.changes, start=1):
        typer.echo(f"  {number}. {applying.describe(change)}")
    typer.echo("Nothing was changed.")


def _execute(plan: Plan, configs: Configs, jobs: _Jobs) -> None:
    from topology.kafka import changes

    def execute(change: Change) -> None:
        if change.resource is Resource.FLOW:
            jobs.execute(change)
        else:
            changes.execute(configs[change.cluster], change, owner=plan.owner)

    width = len(str(len(plan.changes)))

    def started(number: int, total: int, change: Change) -> None:
        typer.echo(
            f"[{number:>{width}}/{total}] {applying.describe(change)} ... ", nl=False, err=True
        )

    def finished(step: applying.Step) -> None:
        if step.outcome is Outcome.DONE:
            typer.echo(f"done ({step.seconds:.1f}s)", err=True)
        elif step.outcome is Outcome.FAILED:
            typer.echo(f"FAILED: {step.detail}", err=True)

    report = applying.run(
        plan,
        execute,
        on_start=started,
        on_done=finished,
    )
    _summarise(report)


def _summarise(report: applying.Report) -> None:

    done = report.count(Outcome.DONE)
    if report.ok:
        typer.echo(f"Apply complete: {done} change(s) made.")
        return
    failed = report.count(Outcome.FAILED)
    skipped = report.count(Outcome.NOT_ATTEMPTED)
    headline = "Apply interrupted" if report.interrupted else "Apply failed"
    typer.echo(
        f"{headline}: {done} done, {failed} failed, {skipped} not attempted "
        f"(of {report.total}). Plan and apply again to finish: the new plan holds only what "
        "is missing.",
        err=True,
    )
    for step in report.steps:
        if step.outcome is not Outcome.DONE:
            typer.echo(
                f"  {step.outcome}: {applying.describe(step.change)} ({step.detail})", err=True
            )
    raise typer.Exit(EXIT_INTERRUPTED if report.interrupted else 1)
