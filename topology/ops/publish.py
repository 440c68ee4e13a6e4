"""Publish: how `topo apply` executes a plan's flow changes, every effect passed in.

One driver runs every flow of a topology, so the first flow change of a plan publishes the
topology's jobs document (the contract the driver runs) to topo-runs.internal on its home
cluster, and the plan's other flow changes are then done. Who runs it:
- the `topo run` already supervising this topology on this machine restarts its driver on the
  new jobs (it reads the log); so does one on another machine, whose driver holds the lease;
- else, for the local and spark runners, a `topo run` started here in the background;
- for the external runner, the `topo run` the user supervises.
A topology left without flows asks the running replication to stop instead.

Apply returns once the driver's own status (what `topo status` reads, in the same log) says it
runs the published jobs (`started`), so a `topo status` right after it agrees.

Before publishing, a flow that takes over from MirrorMaker 2 is refused when MM2's status
topic says MM2 runs it again (time passed since the plan read it).
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from topology.core.errors import TopoError
from topology.core.jobs import JobsDocument, carry_starts
from topology.core.runstate import Book, FlowState
from topology.ops.runs import lease_live, stop_request

STARTUP_TIMEOUT = 180.0  # seconds for a driver to report running on new jobs
# A driver on another machine runs new jobs once its `topo run` has the applied file there
# (a deployment may follow the apply): waited for this long, then left to say so itself.
ELSEWHERE_TIMEOUT = 60.0


class RunLog(Protocol):
    """topo-runs.internal on the home cluster."""

    def read(self) -> Book: ...

    def write(self, kind: str, value: dict[str, Any]) -> object: ...


class Host(Protocol):
    """This machine: its replication supervisor, MM2's state, who asks."""

    def local_supervisor(self) -> int | None:
        """The pid of the `topo run` supervising the topology here, else None."""
        ...

    def start_supervisor(self) -> Callable[[], int | None]:
        """Start `topo run` here in the background; its exit code once it exited, else None."""
        ...

    def alive(self, pid: int) -> Callable[[], int | None]:
        """For a process this one did not start: 1 once it is gone, else None."""
        ...

    def abandon(self) -> None:
        """A supervisor this apply started did not get its driver running: stop it."""
        ...

    def stop_local(self) -> None:
        """Stop the replication supervised here, if any."""
        ...

    def mm2_running(self, flow: str) -> str | None:
        """What of MM2's connector for `flow` its status topic says runs, else None."""
        ...

    def who(self) -> tuple[str, int]:
        """(host name, pid), for a stop request."""
        ...


class Startup(StrEnum):
    WAITING = "waiting"
    RUNNING = "running"
    FAILED = "failed"


@dataclass(frozen=True)
class Started:
    state: Startup
    why: str = ""


# A flow in one of these runs as published (it copies, or has nothing to copy yet).
RUNS = frozenset(
    {FlowState.RUNNING, FlowState.WAITING_FOR_TOPICS, FlowState.DONE, FlowState.PAUSED}
)


def started(book: Book, owner: str, published_at: float, now: float) -> Started:
    """Whether the driver runs the jobs published at `published_at`, judged as `topo status`
    judges it: a live lease and a status record for those jobs whose flows all run. A flow
    that failed to start (the driver retries it with a backoff) is reported, not waited for."""
    if not lease_live(book, owner, now):
        return Started(Startup.WAITING, "no driver holds the lease yet")
    entry = book.status(owner)
    status = entry.value if entry is not None else {}
    if status.get("jobs_published_at") != published_at:
        return Started(Startup.WAITING, "the driver has not reported on these jobs yet")
    if status.get("state") != FlowState.RUNNING:
        return Started(Startup.WAITING, f"the driver is {status.get('state', 'starting')}")
    flows = status.get("flows", [])
    for flow in flows:
        if flow.get("state") in (FlowState.FAILED, FlowState.RESTARTING) and flow.get("error"):
            return Started(Startup.FAILED, f"{flow.get('flow')}: {flow['error']}")
    waiting = [str(f.get("flow")) for f in flows if f.get("state") not in RUNS]
    if waiting:
        return Started(Startup.WAITING, f"{', '.join(waiting)} starting")
    return Started(Startup.RUNNING)


def wait_until_started(
    log: RunLog,
    owner: str,
    published_at: float,
    exited: Callable[[], int | None],
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    timeout: float = STARTUP_TIMEOUT,
) -> Started:
    """Read the log until `started` says running or failed; TopoError when the supervisor
    exits first or `timeout` seconds pass."""
    deadline = clock() + timeout
    last = Started(Startup.WAITING, "not read yet")
    while clock() < deadline:
        code = exited()
        if code is not None:
            raise TopoError(f"the replication supervisor exited ({code}) before its driver ran")
        last = started(log.read(), owner, published_at, clock())
        if last.state is not Startup.WAITING:
            return last
        sleep(0.5)
    raise TopoError(f"the replication driver did not report running in {timeout:.0f}s ({last.why})")


class Publisher:
    """Executes a plan's flow changes (`execute`, once per change, in the plan's order)."""

    def __init__(
        self,
        jobs: Callable[[], JobsDocument],
        runner: str,
        home: str | None,
        log: Callable[[], RunLog | None],
        host: Host,
        progress: Callable[[str], None],
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.clock, self.sleep = clock, sleep
        self.jobs = jobs  # the document to publish (built when the first flow change runs)
        self.runner = runner
        self.home = home  # the cluster whose topo-runs.internal holds the jobs
        self.log = log  # the home cluster's run log; None when the topology has no flows
        self.host = host
        self.progress = progress
        self.handled = False
        self.published: JobsDocument | None = None

    def execute(self) -> None:
        if self.handled:
            return
        jobs = self.jobs()
        self.refuse_if_mm2_runs(jobs)  # before `handled`: every flow change is refused alike
        self.handled = True
        log = self.log()
        if log is None or not jobs.specs:
            self._stop_all(log)
            return
        book = log.read()  # the jobs published before, and who holds the lease
        previous = book.jobs(jobs.owner)
        jobs = carry_starts(jobs, previous.value if previous is not None else None)
        log.write("jobs", jobs.to_dict())
        self.published = jobs
        self.progress(f"published {len(jobs.specs)} job(s) to topo-runs.internal on {self.home}")
        self._run(log, jobs, book)

    def _run(self, log: RunLog, jobs: JobsDocument, book: Book) -> None:
        owner = jobs.owner
        local = self.host.local_supervisor()
        if local is not None:
            self.progress(
                f"the supervisor on this machine (pid {local}) restarts its driver on them"
            )
            self._wait(log, jobs, self.host.alive(local))
        elif lease_live(book, owner, self.clock()):
            lease = book.lease(owner)
            holder = lease.holder if lease is not None else "?"
            self.progress(
                f"the driver running elsewhere ({holder}) is restarted on them by its `topo run`"
            )
            try:
                self._wait(log, jobs, lambda: None, timeout=ELSEWHERE_TIMEOUT)
            except TopoError:  # its machine may not have the applied file yet: not a failure
                self.progress(
                    f"it has not reported running them in {ELSEWHERE_TIMEOUT:.0f}s: its `topo "
                    "run` starts them once the applied file is deployed there (topo status "
                    "shows when)"
                )
        elif self.runner == "external":
            self.progress("the `topo run` you supervise picks them up (docs/service.md)")
        else:
            exited = self.host.start_supervisor()
            try:
                self._wait(log, jobs, exited)
            except BaseException:  # not running as asked: nothing is left to start it later
                self.host.abandon()
                raise

    def _wait(
        self,
        log: RunLog,
        jobs: JobsDocument,
        exited: Callable[[], int | None],
        timeout: float = STARTUP_TIMEOUT,
    ) -> None:
        found = wait_until_started(
            log,
            jobs.owner,
            jobs.published_at,
            exited,
            clock=self.clock,
            sleep=self.sleep,
            timeout=timeout,
        )
        if found.state is Startup.FAILED:
            self.progress(
                f"running, but a flow could not start and is retried: {found.why} "
                "(topo status shows it)"
            )
        else:
            self.progress("the driver reports its flows running")

    def refuse_if_mm2_runs(self, jobs: JobsDocument) -> None:
        """The plan found MM2 stopped on the flows it hands over; asked again now, just before
        they start (time passed since: a confirmation, a saved plan applied later)."""
        for spec in jobs.specs:
            if spec.flow not in jobs.starts:
                continue
            running = self.host.mm2_running(spec.flow)
            if running:
                raise TopoError(
                    f"MirrorMaker 2 runs flow {spec.flow} again: its status topic on "
                    f"{spec.target} shows its {running}; stop it and apply again (no flow was "
                    "started)"
                )

    def _stop_all(self, log: RunLog | None) -> None:
        """No flow is left: the running replication is asked to stop, wherever it runs."""
        if log is not None:
            host, pid = self.host.who()
            reason = "the topology has no flows left"
            log.write("stop", stop_request(reason, host, pid, self.clock()))
        self.host.stop_local()
