"""Supervision of the replication driver: the loop behind `topo run FILE`.

Pure: it decides when to start, restart and stop the driver, and does nothing itself. The
caller passes every effect: `wanted` reads what the run log (`topo-runs.internal`) asks for
now, `start` launches a driver for a jobs document, `reaped` releases the lease of the driver
that just died (a line to report, or None), `stopping` says whether a signal asked this
process to end, `report` prints one line, `clock` and `sleep` are time (`sleep` may return
early, when the driver exits).

Rules, checked once per tick:
- a stop request ends the loop (the driver stopped first): exit 0; so does `stopping()`.
  A stop request already newest at the first read is the topology's standing state ("it was
  stopped"), not a request to this supervisor: it waits for the next apply instead, so a
  service manager restarting `topo run` does not spin;
- no jobs, or jobs that cannot run here: wait, with a line at once and then at most one a
  `wait_note_every` seconds (a running driver is stopped first: it runs superseded jobs);
- jobs and no driver: start one; a newer jobs document (generation): restart with it at once;
- the driver exited: a fatal code ends the loop with that code; `LEASE_HELD` retries after
  `Backoff.first` without growing the delay; anything else (a crash, a kill, an unexpected 0)
  first frees the lease the dead driver held (`reaped`: this loop knows its own driver is
  gone, so its successor need not wait out the lease's TTL), then restarts: at once after a
  healthy run (one that said it runs, `Wanted.running`, or lasted `reset_after`), else after
  the backoff delay (first, doubling, capped): a driver that keeps dying as it starts;
- `wanted` failing with a `TopoError`: the message is reported once (per distinct message),
  the last state read stays in force and the driver keeps running.
"""

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from topology.core.errors import TopoError

# The driver's exit codes (spark/driver.py exits with them; this loop reads them).
LEASE_HELD = 75  # another driver holds the topology's lease
JOBS_REFUSED = 3  # the jobs document cannot be run (format, digest): retrying cannot help
FATAL = frozenset({2, JOBS_REFUSED})  # exit codes retrying cannot help
_FATAL_MEANING = {2: "the topology is refused", 3: "the jobs format is refused"}


@dataclass(frozen=True)
class Wanted:
    """What the run log says now, read every tick."""

    jobs: Any | None  # the newest jobs document for this topology; None: none published
    generation: int | None  # identifies that jobs document; a new value means new jobs
    stop: str | None = None  # a stop request newer than the jobs: "by host:pid at ...", else None
    unusable: str | None = None  # why the published jobs cannot run here, else None
    # The driver this loop started says it runs (its published status): a driver that got
    # that far was healthy, so if it dies it is restarted at once, not after a growing delay.
    running: bool = False


class Driver(Protocol):
    def poll(self) -> int | None:
        """The exit code once the driver exited, else None."""
        ...

    def stop(self, timeout: float) -> int:
        """Ask the driver to stop (SIGTERM), kill it after `timeout` seconds; its exit code."""
        ...


@dataclass(frozen=True)
class Backoff:
    first: float = 5.0
    cap: float = 60.0
    reset_after: float = 300.0  # a run at least this long restarts at once after its end

    def delay(self, attempt: int) -> float:
        """The wait before restart number `attempt` (1-based): none for the first (a crash
        after a healthy run is repaired at once), then first, doubling, capped."""
        if attempt <= 1:
            return 0.0
        return min(self.first * 2.0 ** min(attempt - 2, 60), self.cap)


def describe_exit(code: int) -> str:
    """`2`, or `-9 (SIGKILL)` for a process a signal ended."""
    if code < 0:
        try:
            return f"{code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return str(code)


def supervise(
    *,
    wanted: Callable[[], Wanted],
    start: Callable[[Any], Driver],
    stopping: Callable[[], bool],
    report: Callable[[str], None],
    reaped: Callable[[], str | None] = lambda: None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    backoff: Backoff = Backoff(),
    tick: float = 2.0,
    wait_note_every: float = 60.0,
    stop_timeout: float = 30.0,
) -> int:
    """Run until a stop request or `stopping()` (0) or a fatal driver exit (its code)."""
    loop = _Supervisor(
        wanted,
        start,
        reaped,
        report,
        clock,
        backoff,
        note_every=wait_note_every,
        timeout=stop_timeout,
    )
    while True:
        if stopping():
            return loop.end("stop signal received")
        code = loop.step(stopping)
        if code is not None:
            return code
        pause = tick
        if loop.restart_at is not None:  # wake when the restart is due, not up to a tick late
            pause = max(0.0, min(tick, loop.restart_at - clock()))
        sleep(pause)


class _Supervisor:
    def __init__(
        self,
        wanted: Callable[[], Wanted],
        start: Callable[[Any], Driver],
        reaped: Callable[[], str | None],
        report: Callable[[str], None],
        clock: Callable[[], float],
        backoff: Backoff,
        *,
        note_every: float,
        timeout: float,
    ) -> None:
        self.wanted, self.start, self.reaped = wanted, start, reaped
        self.report, self.clock, self.backoff = report, clock, backoff
        self.note_every, self.timeout = note_every, timeout
        self.known: Wanted | None = None  # the last state read
        self.standing_stop: str | None = None  # the stop request newest at the first read
        self.read_error: str | None = None
        self.note: str | None = None  # the last waiting line, and when it was printed
        self.noted_at = 0.0
        self.driver: Driver | None = None
        self.generation: int | None = None  # of the driver running or last started
        self.started_at = 0.0
        self.restart_at: float | None = None  # a restart is due then (backoff)
        self.attempt = 0  # restarts since the last run that counted as healthy
        self.lease_wait = False  # the restart due is a retry for the lease: start quietly

    def step(self, stopping: Callable[[], bool]) -> int | None:
        """One tick's decisions; an exit code when the loop ends."""
        wanted = self._read()
        if wanted is None:
            return None
        if wanted.stop is not None and wanted.stop != self.standing_stop:
            return self.end(f"stop requested {wanted.stop}")
        now = self.clock()
        code = self.driver.poll() if self.driver is not None else None
        if code is not None:
            # An exit is dealt with before what was read is judged: the live lease the log
            # names may be the dead driver's own, which `_exited` frees for its successor.
            self.driver = None
            if stopping():  # the signal reached the driver too, before this loop saw it
                self.report(f"the driver exited with {describe_exit(code)}")
                return self.end("stop signal received")
            return self._exited(code, now)
        reason = self._cannot_run(wanted)
        if reason is not None:
            if self.driver is not None:
                self.report(f"{reason}; stopping the driver")
                self._stop_driver()
            self.restart_at, self.attempt, self.lease_wait = None, 0, False
            self._note(f"{reason}; waiting", now)
            return None
        if self.driver is not None:
            if wanted.running:
                self.attempt = 0  # healthy: a crash now is repaired at once
            if wanted.generation != self.generation:
                self.report(f"new jobs published (generation {wanted.generation}); restarting")
                self._stop_driver()
                self.attempt = 0
                self._start(wanted, now)
            return None
        if self.restart_at is not None and now < self.restart_at:
            if wanted.generation == self.generation:
                return None
            self.attempt, self.lease_wait = 0, False  # new jobs: start them now
        self._start(wanted, now)
        return None

    def end(self, reason: str) -> int:
        self.report(reason)
        if self.driver is not None:
            self.report("stopping the driver")
            self._stop_driver()
        return 0

    def _read(self) -> Wanted | None:
        try:
            wanted = self.wanted()
        except TopoError as error:
            message = str(error)
            if message != self.read_error:
                running = "; the driver keeps running" if self.driver is not None else ""
                self.report(f"{message}; retrying{running}")
                self.read_error = message
            return self.known
        if self.read_error is not None:
            self.report("the run state is readable again")
            self.read_error = None
        if self.known is None:
            self.standing_stop = wanted.stop
        self.known = wanted
        return wanted

    @staticmethod
    def _cannot_run(wanted: Wanted) -> str | None:
        if wanted.stop is not None:
            return f"the replication was stopped ({wanted.stop}); the next apply resumes it"
        if wanted.jobs is None:
            return "no jobs are published for this topology"
        return wanted.unusable

    def _note(self, line: str, now: float) -> None:
        if line != self.note or now - self.noted_at >= self.note_every:
            self.report(line)
            self.note, self.noted_at = line, now

    def _start(self, wanted: Wanted, now: float) -> None:
        self.generation, self.restart_at = wanted.generation, None
        if not self.lease_wait:
            self.note = None  # a later wait is reported at once
            self.report(f"starting the driver (generation {wanted.generation})")
        try:
            self.driver = self.start(wanted.jobs)
        except TopoError as error:
            self.lease_wait = False
            self._retry_later(f"cannot start the driver: {error}", now)
            return
        self.started_at = now

    def _exited(self, code: int, now: float) -> int | None:
        if code in FATAL:
            meaning = _FATAL_MEANING.get(code, "fatal")
            self.report(f"the driver exited with {code} ({meaning}); retrying cannot help")
            return code
        if now - self.started_at >= self.backoff.reset_after:
            self.attempt = 0
        if code == LEASE_HELD:
            self.lease_wait = True
            self.restart_at = now + self.backoff.first
            self._note("another driver holds the lease; waiting", now)
            return None
        self.lease_wait, self.note = False, None
        if code == 0:
            self._retry_later("the driver ended (exit 0) without a stop request", now)
        else:
            self._retry_later(f"the driver exited with {describe_exit(code)}", now)
        self._free_lease()  # before the restart, which comes at a later step
        return None

    def _free_lease(self) -> None:
        """The dead driver's lease, released for its successor (`reaped`); a failure leaves it
        to expire, as a lease of a driver lost with its machine does."""
        try:
            said = self.reaped()
        except TopoError as error:
            said = f"the dead driver's lease is left to expire: {error}"
        if said:
            self.report(said)

    def _retry_later(self, what: str, now: float) -> None:
        self.attempt += 1
        delay = self.backoff.delay(self.attempt)
        self.restart_at = now + delay
        when = f"in {delay:g}s" if delay > 0 else "at once"
        self.report(f"{what}; restarting {when} (attempt {self.attempt})")

    def _stop_driver(self) -> None:
        assert self.driver is not None
        code = self.driver.stop(self.timeout)
        self.driver = None
        self.report(f"the driver stopped (exit {describe_exit(code)})")
