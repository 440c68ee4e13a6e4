"""The replication driver's side of topo-runs.internal, on threads of its own so that nothing
the replication does (a slow cluster, a long reconcile, Spark starting) delays it.

`LeaseKeeper` claims the topology's lease before Spark starts, then: its lease thread, every
2 s, renews the lease, looks for a stop request newer than the driver's claim, checks that its
`topo run` still lives and publishes the newest status; its watchdog, asleep until then, fences
the driver when the lease has not been renewed for SELF_FENCE seconds (the cluster is
unreachable, a call hangs, the lease thread died): the leader (`ops.replicate`) then halts
every copy at once, well inside the lease's 15 s, after which another driver may take it over.
"""

import os
import threading
import time
from typing import TYPE_CHECKING, Any

from topology.core.errors import TopoError
from topology.core.flow_status import first_line
from topology.core.model import Topology
from topology.host import jobstate
from topology.spark.launch import SUPERVISOR_PID  # set by `topo run`: stop when it is gone

if TYPE_CHECKING:
    from topology.spark.driver import Replicator

LEASE_EVERY = 2.0  # lease renewed, stop requests looked for, status published


class LeaseKeeper:
    """The lease, renewed and watched; stop requests obeyed; the status published."""

    SELF_FENCE = 8.0
    TIMEOUT = 3.0  # each read or write of topo-runs.internal

    def __init__(self, topology: Topology, configs: dict[str, dict[str, str]], report: Any):
        from topology.kafka.runlog import RunLog
        from topology.ops.lease import Leaseholder, holder_id

        home = topology.home
        assert home is not None  # a topology with jobs has edges
        self.owner = topology.name
        self.report = report
        self.log = RunLog(configs[home], topology.name, timeout=self.TIMEOUT, cluster=home)
        self.lease = Leaseholder(self.log, topology.name, holder_id(), report)
        self.renewed = time.monotonic()
        self.claimed_at = 0  # the log's end once the lease was ours: older stops do not apply
        self.fenced = False
        self.stop_asked = False
        self.replicator: Replicator | None = None
        self.problem = ""
        self.done = threading.Event()
        self.threads: list[threading.Thread] = []
        supervisor = os.environ.get(SUPERVISOR_PID, "")
        self.supervisor = int(supervisor) if supervisor.isdigit() else None

    def acquire(self) -> bool:
        """Claim the lease; once ours, renew it from now on (Spark has not started yet)."""
        self.renewed = time.monotonic()
        if not self.lease.acquire(wait=False, should_stop=lambda: True):
            return False
        self.claimed_at = self.log.read().next_offset
        self.renewed = time.monotonic()
        for target, name in ((self._renewals, "topo-lease"), (self._watchdog, "topo-fence")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self.threads.append(thread)
        return True

    def attach(self, replicator: "Replicator") -> None:
        """The replication the lease guards, once it exists."""
        replicator.stopping = replicator.stopping or self.stop_asked or self.fenced
        self.replicator = replicator

    def _renewals(self) -> None:
        while not self.done.is_set() and not self.fenced:
            try:
                ok = self.publish()
            except Exception as problem:  # a bug must not leave the copies unguarded
                self.fence(f"the lease thread failed ({type(problem).__name__}: {problem})")
                return
            self.done.wait(LEASE_EVERY if ok else 1.0)

    def _watchdog(self) -> None:
        """Asleep until the lease would be SELF_FENCE seconds unrenewed (each renewal moves that
        on), then fences unless it was renewed meanwhile."""
        while not self.done.wait(self._until_fence()):
            if self.fenced:
                return
            if time.monotonic() - self.renewed > self.SELF_FENCE:
                self.fence(f"could not renew this topology's lease for {self.SELF_FENCE:.0f}s")
                return

    def _until_fence(self) -> float:
        return max(0.05, self.renewed + self.SELF_FENCE - time.monotonic() + 0.01)

    def stopping(self) -> None:
        self.stop_asked = True
        if self.replicator is not None:
            self.replicator.stopping = True

    def publish(self) -> bool:
        """Renew the lease, obey a stop request, publish the status; False when the log
        could not be reached."""
        started = time.monotonic()
        try:
            if not self.lease.renew():
                self.fence("another driver took this topology's lease")
                return True
            self.renewed = started
            if self.supervisor is not None and not jobstate.alive(self.supervisor):
                self.report(f"its supervisor (`topo run`, pid {self.supervisor}) is gone; stopping")
                self.stopping()
            book = self.log.read()
            stop = book.stop(self.owner)
            if (
                stop is not None
                and stop.offset >= self.claimed_at
                and book.stop_applies(self.owner)
                and not self.stop_asked
            ):
                self.report(f"stop requested by {stop.value.get('by', '?')}; stopping")
                self.stopping()
            snapshot = self.replicator.snapshot if self.replicator is not None else None
            if snapshot is not None:
                state = "stopping" if self.stop_asked else snapshot["state"]
                self.log.write("status", {**snapshot, "state": state})
            self.problem = ""
            return True
        except TopoError as problem:
            if self.replicator is not None:
                self.replicator.figures.error(None, "state")
            if str(problem) != self.problem:
                self.report(f"topo-runs.internal: {first_line(str(problem))}")
                self.problem = str(problem)
            return False

    def fence(self, why: str) -> None:
        """Stop writing now: another driver holds, or may hold, the lease."""
        if self.fenced:
            return
        self.fenced = True
        self.stopping()
        replicator = self.replicator
        if replicator is None:
            self.report(f"{why}; stopping so that no two drivers write")
            return
        replicator.lease_lost(why)  # the leader halts every copy at once

    def finish(self, state: str) -> None:
        """The last status, then the lease released (not when fenced: it is another's)."""
        self.done.set()
        for thread in self.threads:
            thread.join(timeout=4 * self.TIMEOUT + LEASE_EVERY)
        try:
            snapshot = self.replicator.snapshot if self.replicator is not None else None
            if not self.fenced:
                if snapshot is not None:
                    self.log.write("status", {**snapshot, "state": state})
                self.lease.release()
        except TopoError as problem:
            self.report(f"topo-runs.internal: {first_line(str(problem))}")
        finally:
            self.log.close()
