"""`topo reset FILE --flow F --to earliest|latest|DATETIME|OFFSET`: move a paused flow's positions.

MirrorMaker 2's `connect-offsets` alter and reset (KIP-875) for topo: the flow must be paused
(`paused: true` applied, its copy slots stopped with their positions committed). It reads each
partition's committed position and the source's offsets, shows where each one goes and what
that costs (the records copied again, those never copied), asks as `topo apply` does, and
commits the new positions to the flow's progress group on its target. `--dry-run` only shows;
resuming the flow (`paused` removed, `topo apply`) copies from the new positions.
"""

import json
import sys
import time
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from topology.cli.live import Loaded
    from topology.core.model import Edge
    from topology.core.observed import Cluster


def reset(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    flow: Annotated[str, typer.Option("--flow", help="The flow, as SOURCE->TARGET.")],
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="earliest, latest, an ISO 8601 date and time (UTC unless it says) or an offset.",
        ),
    ],
    topics: Annotated[
        list[str] | None,
        typer.Option("--topic", help="Only this source topic (repeat); default: all of them."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show where the positions would go; commit nothing.")
    ] = False,
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Commit without asking for confirmation.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="JSON (schemas/reset.schema.json).")
    ] = False,
) -> None:
    """Move a paused flow's positions (to its start, its end, a time or an offset), after
    showing each partition's move and the records it copies again or never copies."""
    from topology.cli import live
    from topology.core import jobs
    from topology.core import reset as resets
    from topology.core.errors import TopoError
    from topology.core.render.reset import reset_text
    from topology.kafka.offsets import Groups, PartitionReader
    from topology.ops import reset as resetting

    if as_json and not (dry_run or auto_approve):
        raise TopoError("--json asks nothing: pass --dry-run, or --auto-approve to commit")
    where = resets.parse_to(to)
    loaded = live.load(file)
    edge = _edge(loaded, flow)
    spec = jobs.spec_of(loaded.topology, edge)
    refused = resetting.not_paused(spec, file)  # said before any cluster is asked
    if refused is not None:
        raise TopoError(f"reset refused: {refused}")
    asking = not (dry_run or auto_approve)
    if asking and not sys.stdin.isatty():
        raise TopoError(
            "refusing to ask for confirmation: standard input is not a terminal; pass "
            "--auto-approve to commit without asking, or --dry-run to only look"
        )
    owner = loaded.topology.name
    configs = live.client_configs(loaded)
    refused = resetting.refusal(live.run_book(loaded, configs), owner, spec, file, time.time())
    if refused is not None:
        raise TopoError(f"reset refused: {refused}")
    typer.echo(f"Reading {edge.source}'s topics and {spec.target}'s positions ...", err=True)
    source = _observed(edge.source, configs[edge.source])
    copied = _copied(edge, source)
    chosen = resets.chosen_topics(copied, topics or [], flow, edge.settings.separator)
    partitions = {
        topic: (remote, source.topics[topic].partitions) for topic, remote in chosen.items()
    }
    progress = Groups(configs[spec.target])
    reader = PartitionReader(configs[edge.source])
    try:
        planned = resetting.plan(spec, owner, partitions, where, reader, progress)
    finally:
        reader.close()
    document = planned.to_dict()
    if not as_json:
        typer.echo(reset_text(document))
    if dry_run or not planned.changed():
        if as_json:
            typer.echo(json.dumps({**document, "committed": False}, indent=2))
        if dry_run:
            typer.echo(f"Dry run: nothing was committed on {spec.target}.", err=True)
        return
    if asking:
        _confirm(spec.target)
    count = resetting.commit(planned, progress)
    if as_json:
        typer.echo(json.dumps({**document, "committed": True}, indent=2))
        return
    typer.echo(
        f"Committed {count} position(s) of {flow} on {spec.target}. Resume it (remove "
        f"`paused`, then `topo apply {file}`) to copy from them."
    )


def _edge(loaded: "Loaded", flow: str) -> "Edge":
    from topology.core.errors import TopoError

    edges = {edge.name: edge for edge in loaded.topology.edges()}
    if flow not in edges:
        have = ", ".join(edges) or "none"
        raise TopoError(f"no flow {flow} in {loaded.file} (it has: {have})")
    return edges[flow]


def _observed(name: str, config: dict[str, str]) -> "Cluster":
    from topology.kafka import inventory

    return inventory.observe(name, config, settings=False)


def _copied(edge: "Edge", source: "Cluster") -> dict[str, str]:
    """The source topics the flow copies now, each with its name on the target."""
    from topology.core import naming

    names = {name: naming.remote_name(edge, name, source) for name in sorted(source.topics)}
    return {name: remote for name, remote in names.items() if remote is not None}


def _confirm(target: str) -> None:
    from topology.cli.ask import confirm

    confirm(
        f"Do you want to commit these positions on {target}?",
        f"Reset cancelled; nothing was committed on {target}.",
    )
