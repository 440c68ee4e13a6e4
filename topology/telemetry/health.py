"""Readiness: whether every flow runs, keeps up and keeps its objectives, and the measures
its objectives are judged by. Pure; /readyz serves it."""

from typing import Any

from topology.core.objectives import Measures, breached
from topology.core.runstate import FlowState
from topology.telemetry.figures import FlowFigures, Snapshot

READY_STATES = (FlowState.RUNNING.value,)
BEAT_STALE = 30.0  # seconds without a heartbeat copied: the flow is not getting through


def readiness(snapshot: Snapshot, ready_lag: int) -> dict[str, Any]:
    """Ready when every flow's copy runs, waits on at most `ready_lag` records, when it
    copies heartbeats has copied one emitted in the last BEAT_STALE seconds (a target that is
    down leaves the copy running, its writes retried, but nothing arrives; a
    heartbeat_age_seconds objective sets that bound instead), and has no objective breached;
    each flow that is not ready says why. A paused flow is left out: it was asked to wait."""
    unready: dict[str, str] = {}
    for flow, figures in snapshot.flows.items():
        if figures.state == FlowState.PAUSED.value:
            continue  # paused on purpose: nothing to wait for
        # A heartbeat_age_seconds objective replaces BEAT_STALE as the flow's bound.
        beats = figures.beats and all(
            j.objective != "heartbeat_age_seconds" for j in figures.judged
        )
        if figures.state not in READY_STATES:
            unready[flow] = figures.state
        elif (figures.lag or 0) > ready_lag:
            unready[flow] = f"{figures.lag} records behind (more than {ready_lag})"
        elif beats and figures.newest_beat_ms is None:
            unready[flow] = "no heartbeat copied yet"
        elif beats and snapshot.time - (figures.newest_beat_ms or 0) / 1000 > BEAT_STALE:
            age = snapshot.time - (figures.newest_beat_ms or 0) / 1000
            unready[flow] = f"no heartbeat copied for {age:.0f}s"
        elif broken := breached(figures.judged):
            unready[flow] = "objective breached: " + "; ".join(j.describe() for j in broken)
    return {"ready": not unready, "unready": unready}


def measures(snapshot: Snapshot, figures: FlowFigures) -> Measures:
    """What a flow's objectives are judged by, from one snapshot."""
    return Measures(
        lag_seconds=snapshot.flow_lag_seconds(figures),
        lag_records=figures.lag,
        heartbeat_age_seconds=snapshot.heartbeat_age(figures),
        checkpoint_age_seconds=snapshot.checkpoint_age(figures),
        records_copied=figures.records,
    )
