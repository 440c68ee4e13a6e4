"""Readiness: whether every flow runs and keeps up. Pure; /readyz serves it."""

from typing import Any

from topology.core.runstate import FlowState
from topology.telemetry.figures import Snapshot

READY_STATES = (FlowState.RUNNING.value,)
BEAT_STALE = 30.0  # seconds without a heartbeat copied: the flow is not getting through


def readiness(snapshot: Snapshot, ready_lag: int) -> dict[str, Any]:
    """Ready when every flow's query runs, waits on at most `ready_lag` records and, when it
    copies heartbeats, has copied one emitted in the last BEAT_STALE seconds (a target that is
    down leaves the query running, its writes retried, but nothing arrives); each flow that is
    not ready says why."""
    unready: dict[str, str] = {}
    for flow, figures in snapshot.flows.items():
        if figures.state not in READY_STATES:
            unready[flow] = figures.state
        elif (figures.lag or 0) > ready_lag:
            unready[flow] = f"{figures.lag} records behind (more than {ready_lag})"
        elif figures.beats and figures.newest_beat_ms is None:
            unready[flow] = "no heartbeat copied yet"
        elif figures.beats and snapshot.time - (figures.newest_beat_ms or 0) / 1000 > BEAT_STALE:
            age = snapshot.time - (figures.newest_beat_ms or 0) / 1000
            unready[flow] = f"no heartbeat copied for {age:.0f}s"
    return {"ready": not unready, "unready": unready}
