"""`topo status FILE [--json]`: each flow's state, records and bytes copied, lag, recent
throughput and end-to-end latency (from heartbeats), and the changes the running driver made
to follow its sources. Read from topo-runs.internal on the topology's home cluster, where the
driver publishes its status every two seconds, so it works from any machine that reaches the
clusters; a status older than 15 s (by the broker's clock) is said to be stale.

This module reads (the topology, the run log, the heartbeats, MirrorMaker 2's status topics)
and prints; the document and its text are `topology.ops.status`'s."""

import json
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from topology.core.jobs import JobSpec
    from topology.core.model import Topology


def status(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON document (schemas/status.schema.json).")
    ] = False,
) -> None:
    """Show how replication is doing: per flow state, records, bytes, lag, rate, latency."""
    from topology.cli import live
    from topology.core.errors import KafkaUnavailableError
    from topology.core.jobs import specs_of
    from topology.kafka import inventory
    from topology.ops import runs
    from topology.ops import status as report

    loaded = live.load(file)
    owner = loaded.topology.name
    configs = live.client_configs(loaded)
    # Every cluster is asked first, at once: a status read from no cluster would show each
    # flow "not running" while nothing was known. Without the home cluster (the run state) or
    # any cluster, that is an error, as in plan; a flow's cluster down in an outage is what a
    # status is for: said on stderr, and the rest shown.
    down = inventory.unreachable(configs, timeout=live.OBSERVE_TIMEOUT)
    home = loaded.topology.home if loaded.topology.engine.runner != "none" else None
    if down and (len(down) == len(configs) or home in down):
        first = down[home] if home in down else next(iter(down.values()))
        more = f" (and {len(down) - 1} more cluster(s))" if len(down) > 1 else ""
        raise KafkaUnavailableError(f"{first}{more}")
    for problem in down.values():
        typer.echo(f"warning: {problem}; its flows' figures are as last published", err=True)
    book = live.run_book(loaded, configs)
    entry = book.status(owner) if book is not None else None
    running = book is not None and runs.lease_live(book, owner, time.time())
    specs = specs_of(loaded.topology)
    by_mm2 = _run_by_mm2(configs, loaded.topology, specs)
    latencies = _latencies(configs, specs, running, by_mm2)
    now = time.time()
    document = report.document(owner, specs, entry, running, latencies, now, by_mm2)
    if as_json:
        typer.echo(json.dumps(document, indent=2))
    else:
        typer.echo(report.text(document, now))


def _latencies(
    configs: dict[str, dict[str, str]],
    specs: "list[JobSpec]",
    running: bool,
    by_mm2: dict[str, tuple[str, ...]],
) -> dict[str, dict[str, Any]]:
    """Per flow topo (with its heartbeats on) or MM2 runs: the latency of the recent
    heartbeats read from its copy on the target (a flow whose target cannot be read, or with
    none, has no entry)."""
    from topology.kafka import heartbeats
    from topology.ops.status import latency

    found = {}
    for spec in specs:
        if not ((running and spec.heartbeats) or spec.flow in by_mm2):
            continue  # (MM2 writes heartbeats of its own)
        recent = heartbeats.copied(configs[spec.target], spec)
        if recent:
            values = [h.latency_ms for h in recent if h.latency_ms is not None]
            found[spec.flow] = latency(values, recent[-1].emitted_ms, time.time())
    return found


def _run_by_mm2(
    configs: dict[str, dict[str, str]], topology: "Topology", specs: "list[JobSpec]"
) -> dict[str, tuple[str, ...]]:
    """Per flow whose pair MirrorMaker 2 copies now: the parts of its source connector that
    run, by MM2's status topic on the target (a migration's MM2, or one beside topo)."""
    from topology.core.errors import TopoError
    from topology.core.mm2.positions import names_of
    from topology.core.mm2.positions import running as running_parts
    from topology.kafka import mm2_state
    from topology.kafka.mm2_state import Pair

    found = {}
    read: dict[tuple[str, str], list[Pair]] = {}  # (target, status topic) -> its records
    unreachable: set[str] = set()  # targets not asked again
    for spec in specs:
        names = names_of(topology.edge(spec.flow))
        where = (spec.target, names.status_topic)
        if where not in read and spec.target not in unreachable:
            try:
                read[where] = mm2_state.status_records(configs[spec.target], names, timeout=5)
            except TopoError:
                unreachable.add(spec.target)  # its flows' rows say what topo knows without it
                continue
        alive = running_parts(read.get(where, []), names.connector)
        if alive:
            found[spec.flow] = alive
    return found
