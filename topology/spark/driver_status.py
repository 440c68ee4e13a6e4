"""The status a running driver publishes to topo-runs.internal (what `topo status` reads, from
any machine): its flows as the leader (`ops.replicate`) judges them, with their figures, and
the changes the driver made on its own. Built on the driver's main thread, where the flows'
numbers change; the lease thread publishes the newest one."""

import os
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any

from topology.core.flow_status import FlowStatus
from topology.core.jobs import JobsDocument
from topology.core.model import Topology
from topology.core.runstate import FlowState
from topology.ops.replicate import Leader
from topology.telemetry.figures import Figures


class DriverStatus:
    def __init__(
        self, topology: Topology, jobs: JobsDocument, once: bool, figures: Figures
    ) -> None:
        self.once = once
        self.figures = figures
        self.fixed = {
            "owner": jobs.owner,
            "mode": "once" if once else "continuous",
            "host": socket.gethostname(),
            "driver_pid": os.getpid(),
            "runner": topology.engine.runner,
            "master": topology.engine.master,
            "jobs_published_at": jobs.published_at,
            "started_at": time.time(),
        }

    def judge(
        self, flows: Mapping[str, FlowStatus], leader: Leader, topics: Mapping[str, Iterable[str]]
    ) -> None:
        """Each flow's state, restarts and error as the leader has them, to its status and
        its metrics, with the topics and partitions its copy follows."""
        for flow, status in flows.items():
            run = leader.flows[flow]
            status.state, status.restarts = run.state, run.restarts
            if run.error is not None or run.state is FlowState.RUNNING:
                status.error = run.error
            self.figures.state(flow, status.state)
            followed = set(topics.get(flow, ()))
            partitions = sum(1 for topic, _partition in status.processed if topic in followed)
            self.figures.topics(flow, status.topics, partitions)

    def document(
        self,
        state: str,
        flows: Iterable[FlowStatus],
        changes: Iterable[dict[str, Any]],
        metrics_url: str | None,
    ) -> dict[str, Any]:
        now = time.monotonic()
        return {
            **self.fixed,
            "state": state,
            "updated_at": time.time(),
            "flows": [self._flow(status, now) for status in flows],
            "changes": list(changes),
            "metrics_url": metrics_url,
        }

    def _flow(self, status: FlowStatus, now: float) -> dict[str, Any]:
        """A flow's status; while its copy runs continuously, its lag as the metrics measure
        it (the sources' ends against its committed positions, every 5 s), which sees a copy
        that hangs. Once done or stopped, the lag of its last report."""
        found = status.to_dict(now)
        measured = self.figures.lag_of(status.spec.flow)
        if measured is not None and status.state == "running" and not self.once:
            found["lag"] = measured
        found["objectives"] = [each.to_dict() for each in self.figures.judged_of(status.spec.flow)]
        found["losses"] = [
            {"at": at, **loss.to_dict()} for at, loss in self.figures.losses_of(status.spec.flow)
        ]
        return found
