"""`topo apply FILE|PLAN.json`: make the live clusters match the topology, step by step.

With a topology file it plans, shows the plan and asks before changing anything. With a saved
plan it checks the file (`plan.saved.read`: complete, this format, its fingerprint matches its
content), reads the topology's bytes and compares their SHA-256 before parsing them, re-reads
the clusters, and refuses unless the saved plan is exactly the plan topo makes now (a stale or
edited plan); then it executes exactly the saved changes, never re-deciding. A saved plan
made with `--allow-delete` is applied only with `--allow-delete` (and one made without it,
only without): the file's own `allow_delete` is no one's confirmation. Either way the
guard (`plan.guard`) checks every change against the clusters just read before the first one
runs.
"""

import os
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from topology.core.errors import TopoError
from topology.core.plan import execute as applying
from topology.core.plan.execute import Outcome
from topology.core.plan.values import Action, Change, Plan, Resource
from topology.host import jobstate, planned_topology

if TYPE_CHECKING:
    from topology.cli.live import Loaded
    from topology.core.jobs import JobsDocument
    from topology.core.observed import Cluster
    from topology.kafka.runlog import RunLog
    from topology.ops.publish import Publisher
    from topology.ops.reconcile import Planned
    from topology.spark.launch import Supervisor

Configs = dict[str, dict[str, str]]


EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class _Prepared:
    """A plan ready to execute, and what the guard checks it against: the clusters as read
    just now and the plan the planner makes from them."""

    plan: Plan
    configs: Configs
    loaded: "Loaded"
    observed: Mapping[str, "Cluster"]
    expected: Plan

    @property
    def planned(self) -> "Planned":
        from topology.ops.reconcile import Planned

        return Planned(self.expected, self.observed)

    def check(self, plan: Plan) -> None:
        self.planned.check(plan, self.loaded.topology)


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
            "--allow-delete",
            help="Also delete topics and ACLs topo made that no flow needs. With a saved plan: "
            "required when it was made with --allow-delete (confirming its deletes), refused "
            "when it was not.",
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
    from topology.core.plan import saved

    text = read_text(target)
    if saved.looks_like_plan(text):
        prepared = _current_saved_plan(text, target, allow_delete, once)
    else:
        prepared = _fresh_plan(target, allow_delete, once)
        if prepared.plan.empty and not once:
            raise typer.Exit(0)
        prepared.check(prepared.plan)  # before asking: a plan the guard refuses is not offered
        if not (dry_run or auto_approve):
            _confirm()
    plan = prepared.plan
    if dry_run:
        _dry_run(plan)
        raise typer.Exit(0)
    _refuse_without_engine(plan, prepared.loaded, once)
    jobs = _Jobs(prepared.loaded, once, prepared.configs, plan)
    try:
        _execute(prepared, jobs)
        if once:
            raise typer.Exit(jobs.copy_once())
    finally:
        jobs.close()


def _fresh_plan(file: str, allow_delete: bool, once: bool) -> _Prepared:
    from topology.cli import live
    from topology.cli.plan import Format, render

    loaded = live.load(file)
    if once:
        _refuse_once(loaded)
    configs = live.client_configs(loaded)
    observed = live.observe(configs)
    plan = live.make_plan(loaded, observed, allow_delete, configs)
    typer.echo(render(plan.to_dict(), Format.TEXT), nl=False)
    return _Prepared(plan, configs, loaded, observed, plan)


def _current_saved_plan(text: str, file: str, allow_delete: bool, once: bool) -> _Prepared:
    from topology.cli import live
    from topology.core.plan import saved
    from topology.ops import reconcile

    plan = saved.read(text, file)  # complete, this format, fingerprint matches: or refused
    _confirmed(plan, file, allow_delete)
    loaded = _verified_topology(plan, file)
    saved.check_topology(plan, loaded.topology, file)
    if once:
        _refuse_once(loaded)
    configs = live.client_configs(loaded)
    observed = live.observe(configs)
    # the operator's word, not the file's
    current = live.make_plan(loaded, observed, allow_delete, configs)
    reconcile.check_current(plan, current, file)
    prepared = _Prepared(plan, configs, loaded, observed, current)
    prepared.check(plan)
    typer.echo(f"{file} is current: the clusters are as it expects.", err=True)
    return prepared


def _confirmed(plan: Plan, file: str, allow_delete: bool) -> None:
    """A saved plan's `allow_delete` is the file's claim, and anyone who can write the file can
    set it (the fingerprint is no signature): `--allow-delete` must say the same. Checked before
    anything connects."""
    from topology.core.plan.saved import SavedPlanError

    if plan.allow_delete and not allow_delete:
        deletes = _deletes(plan)
        what = f"and deletes {deletes}" if deletes else "(though it deletes no topic or ACL)"
        raise SavedPlanError(
            f"{file} was made with --allow-delete {what}; confirm with "
            f"`topo apply {file} --allow-delete`"
        )
    if allow_delete and not plan.allow_delete:
        raise SavedPlanError(
            f"{file} was made without --allow-delete, so it deletes nothing: apply it without "
            "--allow-delete, or plan again with it"
        )


def _deletes(plan: Plan) -> str:
    """What a plan deletes that only --allow-delete allows: "2 topic(s) and 1 ACL(s)"."""
    counts = {
        label: sum(1 for c in plan.changes if (c.action, c.resource) == (Action.DELETE, kind))
        for label, kind in (("topic(s)", Resource.TOPIC), ("ACL(s)", Resource.ACL))
    }
    shown = [f"{n} {label}" for label, n in counts.items() if n]
    return " and ".join(shown)


def _verified_topology(plan: Plan, plan_file: str) -> "Loaded":
    """The topology the plan was made from, its bytes read once: hashed and compared with the
    plan's SHA-256 first, parsed only when they match, so a plan naming another file never gets
    that file's content shown (a parse error quotes the line it is on)."""
    from topology.cli.live import Loaded
    from topology.cli.report import show
    from topology.core.analysis import analyse

    path, data = planned_topology.matching(plan, plan_file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:  # its hash matched: only a plan made by hand gets here
        raise TopoError(f"{plan.topology_file}: not UTF-8 text; plan again") from None
    analysis = analyse(text, path)
    show(analysis.diagnostics, analysis.document)
    if not analysis.ok or analysis.topology is None:
        raise TopoError(f"{path} has errors (shown above); fix them, then plan again")
    return Loaded(path, plan.topology_sha256, analysis.topology)


def _refuse_without_engine(plan: Plan, loaded: "Loaded", once: bool) -> None:
    """Replication needs the `spark` extra: say so before the first change, not halfway. A
    flow change (re)starts the driver with every flow the topology has; with none left it only
    stops the running one, which needs no Spark."""
    from topology.core.jobs import specs_of
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
    if live.running_jobs(loaded):
        raise TopoError(
            f"replication of {loaded.topology.name} is running continuously; stop it first "
            f"(topo stop {loaded.file}): two jobs must not share a checkpoint"
        )


class _Jobs:
    """The plan's flow changes, executed by `ops.publish.Publisher` through this machine's
    adapters (`_Host`, the home cluster's run log). With --once the flows are not started in
    the background: `copy_once` runs them after the plan."""

    def __init__(self, loaded: "Loaded", once: bool, configs: Configs, plan: Plan) -> None:
        self.loaded = loaded
        self.plan = plan
        self.once = once
        self.configs = configs
        self.log: RunLog | None = None
        self.publisher: Publisher | None = None
        # Made before any change runs: a secret written in the file is refused now, not halfway.
        starts = any(
            c.resource is Resource.FLOW and c.action is not Action.DELETE for c in plan.changes
        )
        self.document = self._document() if once or starts else None

    def _document(self) -> "JobsDocument":
        """The topology's jobs, with where each flow the plan starts from MM2's positions
        resumes (topology/core/plan/handover.py)."""
        from topology.core.jobs import document
        from topology.core.plan.handover import starts

        resumed = {
            change.name: starts(after["resume"])
            for change in self.plan.changes
            if change.resource is Resource.FLOW and "resume" in (after := change.after or {})
        }
        return document(self.loaded.topology, time.time(), resumed)

    def execute(self, change: Change) -> None:
        from topology.ops.publish import Publisher

        if self.once:
            return
        publisher = self.publisher
        if publisher is None:
            topology = self.loaded.topology
            made = self.document if self.document is not None else self._document()
            jobs = replace(made, published_at=time.time())
            publisher = Publisher(
                lambda: jobs,
                topology.engine.runner,
                topology.home,
                self._log,
                _Host(self.loaded, self.configs),
                _progress,
            )
            self.publisher = publisher
        publisher.execute()

    def _log(self) -> "RunLog | None":
        from topology.kafka.runlog import RunLog

        home, owner = self.loaded.topology.home, self.loaded.topology.name
        if home is None:
            return None
        if self.log is None:
            self.log = RunLog(self.configs[home], owner, cluster=home)
        return self.log

    def close(self) -> None:
        if self.log is not None:
            self.log.close()

    def copy_once(self) -> int:
        from topology.ops.publish import Publisher
        from topology.spark import launch

        jobs = self.document if self.document is not None else self._document()
        home = self.loaded.topology.home
        Publisher(
            lambda: jobs, "none", home, self._log, _Host(self.loaded, self.configs), _progress
        ).refuse_if_mm2_runs(jobs)
        submission = launch.submission(jobs, str(Path(self.loaded.file).parent))
        typer.echo(f"Copying what the sources hold now ({len(jobs.specs)} flow(s)) ...", err=True)
        code = launch.run_once(submission, jobs, report=_progress)
        typer.echo("Copy complete." if code == 0 else "Copy FAILED (see above).", err=True)
        return code


class _Host:
    """This machine, as `ops.publish` asks it: its supervisor, MM2's state, who asks."""

    def __init__(self, loaded: "Loaded", configs: Configs) -> None:
        self.loaded = loaded
        self.configs = configs
        self.started: Supervisor | None = None

    def local_supervisor(self) -> int | None:
        local = jobstate.running_driver(self.loaded.topology.name)
        return None if local is None else local.launcher_pid

    def start_supervisor(self) -> "Callable[[], int | None]":
        from topology.spark import launch

        file = str(Path(self.loaded.file).resolve())
        self.started = launch.start_supervisor(self.loaded.topology.name, file, _progress)
        return self.started.exited

    def alive(self, pid: int) -> "Callable[[], int | None]":
        return lambda: None if jobstate.alive(pid) else 1

    def abandon(self) -> None:
        if self.started is not None:
            self.started.abandon()

    def stop_local(self) -> None:
        from topology.spark import launch

        launch.stop(self.loaded.topology.name, report=_progress)

    def mm2_running(self, flow: str) -> str | None:
        from topology.core.mm2.positions import names_of
        from topology.kafka import mm2_state

        edge = self.loaded.topology.edge(flow)
        names = names_of(edge)
        running = mm2_state.running(self.configs[edge.target], names, timeout=15)
        return f"{running[0]} (in {names.status_topic})" if running else None

    def who(self) -> tuple[str, int]:
        return socket.gethostname(), os.getpid()


def _progress(line: str) -> None:
    typer.echo(f"  {line}", err=True)


def _confirm() -> None:
    if not sys.stdin.isatty():
        raise TopoError(
            "refusing to ask for confirmation: standard input is not a terminal; "
            "pass --auto-approve to apply without asking"
        )
    from topology.cli.ask import confirm

    confirm("Do you want to apply these changes?", "Apply cancelled; nothing was changed.")


def _dry_run(plan: Plan) -> None:
    typer.echo(f"Dry run: apply would make these {len(plan.changes)} change(s), in this order:")
    for number, change in enumerate(plan.changes, start=1):
        typer.echo(f"  {number}. {applying.describe(change)}")
    typer.echo("Nothing was changed.")


def _execute(prepared: _Prepared, jobs: _Jobs) -> None:
    from topology.kafka import changes
    from topology.ops import reconcile

    plan, configs = prepared.plan, prepared.configs

    def execute(change: Change) -> None:
        if change.resource is Resource.FLOW:
            jobs.execute(change)
        else:
            changes.execute(configs[change.cluster], change, owner=plan.owner)

    def create_together(creations: Sequence[Change]) -> Sequence[str | None]:
        return changes.create_topics(configs[creations[0].cluster], creations, owner=plan.owner)

    width = len(str(len(plan.changes)))

    def started(number: int, total: int, change: Change) -> None:
        typer.echo(
            f"[{number:>{width}}/{total}] {applying.describe(change)} ... ", nl=False, err=True
        )

    def finished(step: applying.Step) -> None:
        if step.outcome is Outcome.DONE:
            together = f", {step.detail}" if step.detail else ""
            typer.echo(f"done ({step.seconds:.1f}s{together})", err=True)
        elif step.outcome is Outcome.FAILED:
            typer.echo(f"FAILED: {step.detail}", err=True)

    report = reconcile.execute(  # the guard checks every change before the first one runs
        plan,
        prepared.planned,
        prepared.loaded.topology,
        execute,
        on_start=started,
        on_done=finished,
        run_together=create_together,
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
