"""The status of a topology's replication: the document `topo status --json` prints
(`schemas/status.schema.json`) and its text form.

Pure: built from the topology's job specs, the newest status record the driver published to
topo-runs.internal (its value and the broker's timestamp), whether the driver's lease is live
(`ops.runs.lease_live`), the heartbeat latencies the caller read, what MirrorMaker 2's status
topics say it runs, and `now` (this machine's unix time, seconds). A status older than
`STALE_AFTER` by the broker's clock is stale: the driver may be stuck or gone. Every flow of the
topology has an entry, `not running` when the driver reports none for it (or no driver runs),
`run by MM2` when topo does not run it and MM2 does (a migration: its heartbeats' latency is
shown all the same).
"""

import statistics
import time
from collections.abc import Mapping, Sequence
from typing import Any

from topology.core.jobs import JobSpec
from topology.core.objectives import Judged
from topology.core.progress import Loss
from topology.core.runstate import Entry

STALE_AFTER = 15.0  # seconds without a status update: the driver is not making progress
CHANGES_SHOWN = 10  # the newest changes the text shows (the document has all the driver kept)
MM2_STATE = "run by MM2"  # topo does not run the flow; MM2's status topic says MM2 does


def document(
    owner: str,
    specs: Sequence[JobSpec],
    entry: Entry | None,
    running: bool,
    latencies: Mapping[str, Mapping[str, Any]],
    now: float,
    mm2: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The status document: the driver that published `entry`, one entry per spec (the
    driver's numbers while `running`; `latencies` while topo or MM2 runs the flow; `mm2`: per
    flow, the parts of MM2's source connector for its pair that run, by MM2's status topic),
    the driver's own changes."""
    reported = entry.value if entry is not None else None
    flows = {f["flow"]: f for f in (reported or {}).get("flows", [])} if running else {}
    by_mm2 = mm2 or {}
    return {
        "owner": owner,
        "running": running,
        "driver": _driver(reported, entry.timestamp_ms if entry is not None else None, now),
        "flows": [
            _flow(
                spec,
                flows.get(spec.flow),
                tuple(by_mm2.get(spec.flow, ())),
                # old heartbeats say nothing of a flow neither topo nor MM2 copies now
                latencies.get(spec.flow) if running or by_mm2.get(spec.flow) else None,
            )
            for spec in specs
        ],
        "changes": list((reported or {}).get("changes", [])),
    }


def latency(values_ms: Sequence[int], newest_emitted_ms: int, now: float) -> dict[str, Any]:
    """One flow's `latency_ms`: p50 and max of its recent heartbeats' end-to-end latencies
    (None without any: a copy topic that keeps the emit time tells none), and how old the
    newest is (a flow whose heartbeats stopped arriving is not replicating)."""
    return {
        "p50": int(statistics.median(values_ms)) if values_ms else None,
        "max": max(values_ms) if values_ms else None,
        "newest_age_s": round(now - newest_emitted_ms / 1000, 1),
    }


def _driver(
    reported: dict[str, Any] | None, published_ms: int | None, now: float
) -> dict[str, Any] | None:
    if reported is None:
        return None
    age = None if published_ms is None else now - published_ms / 1000
    return {
        "host": str(reported.get("host", "?")),
        "pid": int(reported.get("driver_pid", 0)),
        "runner": reported.get("runner", "local"),
        "master": str(reported.get("master", "?")),
        "state": str(reported.get("state", "?")),
        "started_at": float(reported.get("started_at", 0.0)),
        "updated_at": reported.get("updated_at"),
        "stale": age is None or age > STALE_AFTER,
        "metrics_url": reported.get("metrics_url"),
    }


def _flow(
    spec: JobSpec,
    reported: Mapping[str, Any] | None,
    mm2: tuple[str, ...],
    latency_ms: Mapping[str, Any] | None,
) -> dict[str, Any]:
    numbers = reported or {}
    state = numbers.get("state", "not running")
    if reported is None and mm2:
        state = MM2_STATE
    return {
        "flow": spec.flow,
        "source": spec.source,
        "target": spec.target,
        "delivery": spec.delivery,
        "state": state,
        "topics": numbers.get("topics", 0),
        "records": numbers.get("records", 0),
        "bytes": numbers.get("bytes", 0),
        "lag": numbers.get("lag"),
        "records_per_second": numbers.get("records_per_second", 0.0),
        "bytes_per_second": numbers.get("bytes_per_second", 0.0),
        "latency_ms": None if latency_ms is None else dict(latency_ms),
        "restarts": numbers.get("restarts", 0),
        "error": numbers.get("error"),
        "mm2": list(mm2),
        "objectives": list(numbers.get("objectives", [])),
        "losses": list(numbers.get("losses", [])),
    }


def text(document: Mapping[str, Any], now: float) -> str:
    """The document for a person: a headline, a table of the flows, their errors, and the
    newest changes the driver made (times in this machine's time zone)."""
    owner = document["owner"]
    driver = document["driver"]
    if driver is None or not document["running"]:
        lines = [f"Replication of {owner} is not running (`topo apply FILE` starts it)."]
        if driver is not None:
            lines[0] += (
                f" Its last driver ({driver['host']}, pid {driver['pid']}) was {driver['state']}."
            )
        by_mm2 = sum(flow["state"] == MM2_STATE for flow in document["flows"])
        if by_mm2:
            lines[0] += f" MirrorMaker 2 copies {by_mm2} of its {len(document['flows'])} flows."
    else:
        up = now - driver["started_at"]
        stale = "; NO RECENT STATUS: the driver may be stuck" if driver["stale"] else ""
        where = f"{driver['host']} ({driver['runner']}, {driver['master']}, pid {driver['pid']}"
        lines = [f"Replication of {owner}: running on {where}, up {duration(up)}){stale}"]
        if driver.get("metrics_url"):
            lines.append(f"Metrics: {driver['metrics_url']}/metrics (`topo dashboard` charts them)")
    header = (
        "FLOW",
        "STATE",
        "TOPICS",
        "RECORDS",
        "BYTES",
        "LAG",
        "RECORDS/S",
        "MB/S",
        "LATENCY",
        "OBJECTIVES",
    )
    rows = [header]
    for flow in document["flows"]:
        latency_ms = flow["latency_ms"]
        rows.append(
            (
                flow["flow"],
                flow["state"],
                str(flow["topics"]),
                f"{flow['records']:,}",
                size(flow["bytes"]),
                "-" if flow["lag"] is None else f"{flow['lag']:,}",
                f"{flow['records_per_second']:,.1f}",
                f"{flow['bytes_per_second'] / 1e6:.2f}",
                _latency(latency_ms),
                _objectives(flow["objectives"]),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines.append("")
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    for flow in document["flows"]:
        if flow["error"]:
            lines.append(f"{flow['flow']}: {flow['error']}")
        for loss in flow["losses"]:
            when = time.strftime("%H:%M:%S", time.localtime(loss["at"]))
            lines.append(f"{flow['flow']}: LOST at {when}: {_loss(loss)}")
        for judged in flow["objectives"]:
            if judged["breached"]:
                since = time.strftime("%H:%M:%S", time.localtime(judged["since"]))
                lines.append(f"{flow['flow']}: objective breached since {since}: {_judged(judged)}")
        if flow["mm2"]:
            parts = ", ".join(flow["mm2"])
            if flow["state"] == MM2_STATE:
                lines.append(f"{flow['flow']}: MirrorMaker 2 copies it ({parts})")
            else:
                lines.append(
                    f"{flow['flow']}: MirrorMaker 2 also runs {flow['source']}->"
                    f"{flow['target']} ({parts}): a topic both copy is copied twice"
                )
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


def _objectives(judged: Sequence[Mapping[str, Any]]) -> str:
    """`ok`, `2 breached`, `over` (past a bound, not for long enough yet), `-` without any."""
    if not judged:
        return "-"
    broken = sum(1 for each in judged if each["breached"])
    if broken:
        return f"{broken} BREACHED"
    return "over" if any(each["since"] is not None for each in judged) else "ok"


def _loss(loss: Mapping[str, Any]) -> str:
    return Loss(loss["topic"], loss["partition"], loss["kind"], loss["from"], loss["to"]).describe()


def _judged(judged: Mapping[str, Any]) -> str:
    return Judged(
        judged["objective"], judged["bound"], judged["value"], judged["since"], True
    ).describe()


def _latency(latency_ms: Mapping[str, Any] | None) -> str:
    """`40 ms`; `newest 2s ago` where the copies tell no latency; `-` without heartbeats."""
    if latency_ms is None:
        return "-"
    if latency_ms["p50"] is None:
        return f"newest {latency_ms['newest_age_s']:.0f}s ago"
    return f"{latency_ms['p50']} ms"


def size(count: int) -> str:
    """Bytes for a person: `1.5 MB`, `512 B`."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def duration(seconds: float) -> str:
    """`1h02m`, or `3m05s` under an hour."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
