"""`topo failover FILE --group G --from A --to B`: move consumer groups to another cluster.

Commits each group's translated offsets on B, so its consumers resume there exactly where they
left off on A: every record they had not committed, none they had (docs/offsets.md). First it
shows what the move costs, per group and partition (the offset it commits, the records read
again, what A holds that is not copied yet) and asks, as `topo apply` does; `--dry-run` shows
it and commits nothing. The same command fails back (B to A). `topo offsets FILE --group G`
shows the translations without committing.
"""

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from topology.ops.failover import Offsets

GroupOption = Annotated[
    list[str] | None, typer.Option("--group", "-g", help="A consumer group (repeat for more).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="JSON (schemas/offsets.schema.json).")]


def failover(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    origin: Annotated[str, typer.Option("--from", help="The cluster the groups leave.")],
    destination: Annotated[str, typer.Option("--to", help="The cluster they move to.")],
    groups: GroupOption = None,
    every: Annotated[
        bool, typer.Option("--all", help="Every group on --from the flows' group filters admit.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Commit even where --from's data has not all arrived yet."),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show what it would commit and cost; commit nothing."),
    ] = False,
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Commit without asking for confirmation.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Commit consumer groups' translated offsets on another cluster (failover, failback),
    after showing what it costs: the offsets, the records read again, what is not copied yet."""
    from topology.core.errors import TopoError
    from topology.core.render.offsets import commits_text, moves_text

    if every == bool(groups):
        raise TopoError("name the groups with --group, or pass --all (not both)")
    if as_json and not (dry_run or auto_approve):
        raise TopoError("--json asks nothing: pass --dry-run, or --auto-approve to commit")
    found = _offsets(file, origin, destination, asking=not (dry_run or auto_approve))
    moves = found.plan_failover(origin, destination, None if every else groups, force)
    refused = any(move.refused for move in moves)
    if not (refused or dry_run):
        if not auto_approve:
            typer.echo(moves_text([move.to_dict() for move in moves], True))
            _confirm(destination)
        found.commit(moves)
    documents = [move.to_dict() for move in moves]
    if as_json:
        typer.echo(json.dumps({"groups": documents}, indent=2))
    elif dry_run or refused or auto_approve:
        typer.echo(moves_text(documents, True))
    if refused:
        raise TopoError(f"failover refused; nothing was committed on {destination} (reasons above)")
    if dry_run:
        typer.echo(f"Dry run: nothing was committed on {destination}.", err=True)
    elif not as_json:
        typer.echo(commits_text(documents), nl=False)


def _confirm(destination: str) -> None:
    from topology.cli.ask import confirm

    confirm(
        f"Do you want to commit these offsets on {destination}?",
        f"Failover cancelled; nothing was committed on {destination}.",
    )


def offsets(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    groups: GroupOption = None,
    origin: Annotated[
        str | None, typer.Option("--from", help="Only offsets committed on this cluster.")
    ] = None,
    destination: Annotated[
        str | None, typer.Option("--to", help="Only translations to this cluster.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Show consumer groups' committed offsets and their translations, without committing."""
    from topology.core.errors import TopoError
    from topology.core.render.offsets import moves_text

    if not groups:
        raise TopoError("name at least one group with --group")
    moves = _offsets(file, origin, destination).show(groups, origin, destination)
    documents = [move.to_dict() for move in moves]
    if as_json:
        typer.echo(json.dumps({"groups": documents}, indent=2))
    elif not documents:
        typer.echo(f"No offsets of {', '.join(groups)} on replicated topics.")
    else:
        typer.echo(moves_text(documents, False))


def _offsets(
    file: str, origin: str | None, destination: str | None, asking: bool = False
) -> "Offsets":
    """The topology's clusters read, after the cluster names are checked (and, when a
    confirmation will be asked for, that there is a terminal to ask on)."""
    from topology.cli import live
    from topology.core.errors import TopoError
    from topology.kafka.offsets_port import KafkaOffsets
    from topology.ops.failover import Offsets

    loaded = live.load(file)
    known = loaded.topology.clusters
    for name in (origin, destination):
        if name is not None and name not in known:
            raise TopoError(f"no cluster {name} in {file} (it has: {', '.join(sorted(known))})")
    if origin is not None and origin == destination:
        raise TopoError("--from and --to name the same cluster")
    if asking and not sys.stdin.isatty():
        raise TopoError(
            "refusing to ask for confirmation: standard input is not a terminal; pass "
            "--auto-approve to commit without asking, or --dry-run to only look"
        )
    configs = live.client_configs(loaded)
    typer.echo(f"Reading {len(configs)} cluster(s) ...", err=True)

    def report(line: str) -> None:
        typer.echo(line, err=True)

    return Offsets(loaded.topology, configs, report, KafkaOffsets())
