"""`topo failover FILE --group G --from A --to B`: move consumer groups to another cluster.

Commits each group's translated offsets on B, so its consumers resume there exactly where they
left off on A: every record they had not committed, none they had (docs/offsets.md). The same
command fails back (B to A). `topo offsets FILE --group G` shows the same without committing.
"""

import json
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
    as_json: JsonOption = False,
) -> None:
    """Commit consumer groups' translated offsets on another cluster (failover, failback)."""
    from topology.core.errors import TopoError
    from topology.core.render.offsets import moves_text

    if every == bool(groups):
        raise TopoError("name the groups with --group, or pass --all (not both)")
    found = _offsets(file, origin, destination)
    moves = found.failover(origin, destination, None if every else groups, force)
    refused = any(move.refused for move in moves)
    documents = [move.to_dict() for move in moves]
    shown = json.dumps({"groups": documents}, indent=2) if as_json else moves_text(documents, True)
    typer.echo(shown)
    if refused:
        raise TopoError(f"failover refused; nothing was committed on {destination} (reasons above)")


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


def _offsets(file: str, origin: str | None, destination: str | None) -> "Offsets":
    """The topology's clusters read, after the cluster names are checked."""
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
    configs = live.client_configs(loaded)
    typer.echo(f"Reading {len(configs)} cluster(s) ...", err=True)

    def report(line: str) -> None:
        typer.echo(line, err=True)

    return Offsets(loaded.topology, configs, report, KafkaOffsets())
