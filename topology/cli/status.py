"""`topo status FILE [--json]`: each flow's state, records and bytes copied, lag, recent
throughput and end-to-end latency (from heartbeats), and the changes the running driver made
to follow its sources. Read from topo-runs.internal on the topology's home cluster, where the
driver publishes its status every two seconds, so it works from any machine that reaches the
clusters; a status older than 15 s (by the broker's clock) is said to be stale."""

import json
import statistics
import time
from typing import Annotated, Any

import typer

from topology.jobs import JobSpec

STALE_AFTER = 15.0  # seconds without a status update: the driver is not making progress
CHANGES_SHOWN = 10


def status(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON document (schemas/status.schema.json).")
    ] = False,
) -> None:
    """Show how replication is doing: per flow state, records, bytes, lag, rate, latency."""
    from topology.cli import live
    from topology.jobs import specs_of

    loaded = live.load(file)
    owner = loaded.topology.name
    configs = live.client_configs(loaded)
    book = live.run_book(loaded, configs)
    entry = book.status(owner) if book is not None else None
    running = book is not None and live.lease_live(book, owner)
    reported = entry.value if entry is not None else None
    flows = {f["flow"]: f for f in (reported or {}).get("flows", [])} if running else {}
    specs = specs_of(loaded.topology)
    latencies = _latencies(configs, specs) if running else {}
    document = {
        "owner": owner,
        "running": running,
        "driver": _driver(reported, entry.timestamp_ms if entry is not None else None),
        "flows": [_flow(spec, flows.get(spec.flow), latencies.get(spec.flow)) for spec in specs],
        "changes": list((reported or {}).get("changes", [])),
    }
    if as_json:
        typer.echo(json.dumps(document, indent=2))
    else:
        typer.echo(_text(document))


def _driver(reported: dict[str, Any] | None, published_ms: int | None) -> dict[str, Any] | None:
    if reported is None:
        return None
    age = None if published_ms is None else time.time() - published_ms / 1000
    return {
        "host": str(reported.get("host", "?")),
        "pid": int(reported.get("driver_pid", 0)),
        "runner": reported.get("runner", "local"),
        "master": str(reported.get("master", "?")),
        "state": str(reported.get("state", "?")),
        "started_at": float(reported.get("started_at", 0.0)),
        "updated_at": reported.get("updated_at"),
        "stale": age is None or age > STALE_AFTER,
    }


def _flow(
    spec: JobSpec, reported: dict[str, Any] | None, latency: dict[str, Any] | None
) -> dict[str, Any]:
    numbers = reported or {}
    return {
        "flow": spec.flow,
        "source": spec.source,
        "target": spec.target,
        "delivery": spec.delivery,
        "state": numbers.get("state", "not running"),
        "topics": numbers.get("topics", 0),
        "records": numbers.get("records", 0),
        "bytes": numbers.get("bytes", 0),
        "lag": numbers.get("lag"),
        "records_per_second": numbers.get("records_per_second", 0.0),
        "bytes_per_second": numbers.get("bytes_per_second", 0.0),
        "latency_ms": latency,
        "restarts": numbers.get("restarts", 0),
        "error": numbers.get("error"),
    }


def _latencies(
    configs: dict[str, dict[str, str]], specs: list[JobSpec]
) -> dict[str, dict[str, Any]]:
    """Per flow: p50 and max of the recent heartbeats' end-to-end latency, and how old the
    newest is (a flow whose heartbeats stopped arriving is not replicating)."""
    from topology.errors import TopoError
    from topology.kafka import heartbeats
    from topology.naming import heartbeats_copy

    found = {}
    for spec in specs:
        if not spec.heartbeats:
            continue
        topic = heartbeats_copy(spec.source, spec.separator)
        try:
            recent = heartbeats.recent(configs[spec.target], topic, timeout=5)
        except TopoError:
            continue
        if recent:
            values = [h.latency_ms for h in recent]
            found[spec.flow] = {
                "p50": int(statistics.median(values)),
                "max": max(values),
                "newest_age_s": round(time.time() - recent[-1].emitted_ms / 1000, 1),
            }
    return found


def _text(document: dict[str, Any]) -> str:
    owner = document["owner"]
    driver = document["driver"]
    if driver is None or not document["running"]:
        lines = [f"Replication of {owner} is not running (`topo apply FILE` starts it)."]
        if driver is not None:
            lines[0] += (
                f" Its last driver ({driver['host']}, pid {driver['pid']}) was {driver['state']}."
            )
    else:
        up = time.time() - driver["started_at"]
        stale = "; NO RECENT STATUS: the driver may be stuck" if driver["stale"] else ""
        where = f"{driver['host']} ({driver['runner']}, {driver['master']}, pid {driver['pid']}"
        lines = [f"Replication of {owner}: running on {where}, up {_duration(up)}){stale}"]
    header = ("FLOW", "STATE", "TOPICS", "RECORDS", "BYTES", "LAG", "RECORDS/S", "MB/S", "LATENCY")
    rows = [header]
    for flow in document["flows"]:
        latency = flow["latency_ms"]
        rows.append((
            flow["flow"], flow["state"], str(flow["topics"]), f"{flow['records']:,}",
            _size(flow["bytes"]), "-" if flow["lag"] is None else f"{flow['lag']:,}",
            f"{flow['records_per_second']:,.1f}", f"{flow['bytes_per_second'] / 1e6:.2f}",
            "-" if latency is None else f"{latency['p50']} ms",
        ))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines.append("")
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    for flow in document["flows"]:
        if flow["error"]:
            lines.append(f"{flow['flow']}: {flow['error']}")
    changes = document["changes"][-CHANGES_SHOWN:]
    if changes:
        lines += ["", "Changes the driver made to follow the sources (newest last):"]
        for change in changes:
            when = time.strftime("%H:%M:%S", time.localtime(change["at"]))
            outcome = (
                ""
                if change["outcome"] == "done"
                else f" [{change['outcome'].upper()}: {change['detail']}]"
            )
            what = f"{change['cluster']}: {change['action']} {change['resource']} {change['name']}"
            why = f"{change['reason']}{outcome}"
            lines.append(f"  {when}  {what} ({change['what']}): {why}")
    return "\n".join(lines)


def _size(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
