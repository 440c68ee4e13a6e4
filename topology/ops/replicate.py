"""The replication driver's decisions: one step function over what it saw, every effect left
to the caller (`spark/driver.py`, which only looks and acts).

The driver runs one copy loop per job. Every tick it tells `step`
what it saw (`Tick`): the time, each flow's topics as the sources have them now (when it
looked), the copies that ended and why, the starts that failed, whether the lease was lost or
a stop asked. `step` updates each flow's `FlowRun` and returns the `Action`s to take, in order:
- a flow with topics and no copy is started; a flow without topics waits (`waiting for
  topics`; with `--once`, it is done);
- new topics, and new partitions of its topics, join a running copy loop (nothing restarts);
  a running flow left without topics is stopped;
- a copy that ended without an error is done; one that failed, or that could not start, is
  started again after a backoff (5 s, doubling, at most 60 s), alone; with `--once` it fails;
- a paused flow (`paused: true`) is never started: it stays `paused`, its positions where its
  slots committed them;
- a lost lease halts every copy at once (no commit: another driver may hold it now) and the
  driver stops; a stop request stops every copy cleanly.
`run_state` says what the whole driver reports; `exit_code` what `--once` exits with.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from topology.core.runstate import FlowState

BACKOFF_FIRST = 5.0
BACKOFF_CAP = 60.0


def backoff(restarts: int) -> float:
    """Seconds before a failed copy starts again, after `restarts` restarts: first, doubling,
    capped."""
    return min(BACKOFF_CAP, BACKOFF_FIRST * 2.0 ** min(restarts, 16))


class Do(StrEnum):
    START = "start"  # start the flow's copy on `topics`
    JOIN = "join"  # give the running copy loop `topics` (a topic or partition added)
    STOP = "stop"  # stop the flow's copy cleanly
    HALT_ALL = "halt all"  # stop every copy now, committing nothing: the lease is lost
    STOP_ALL = "stop all"  # stop every copy cleanly: a stop was asked
    REPORT = "report"  # a line for the log


@dataclass(frozen=True)
class Action:
    do: Do
    flow: str | None = None
    topics: Mapping[str, str] | None = None  # source topic -> its name on the target
    line: str = ""
    event: str = "driver"
    level: str = "info"


@dataclass
class FlowRun:
    """One flow as the leader sees it."""

    state: FlowState = FlowState.STARTING
    topics: dict[str, str] | None = None  # the map its copy runs on; None before the first look
    running: bool = False  # a copy of it runs now, or is being started
    restarts: int = 0
    retry_at: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class Tick:
    now: float  # monotonic seconds
    maps: Mapping[str, Mapping[str, str]] | None = None  # per flow, its topics now (if looked)
    ended: Mapping[str, str | None] = field(default_factory=dict)  # flow -> its error, or None
    start_failed: Mapping[str, str] = field(default_factory=dict)  # flow -> why it could not
    started: frozenset[str] = frozenset()  # the flows whose copy started
    lease_lost: str | None = None  # why, when the lease is lost (or may be)
    stop_asked: bool = False


class Leader:
    """The driver's decisions over its flows; `step` once per tick."""

    def __init__(self, flows: list[str], once: bool, paused: frozenset[str] = frozenset()) -> None:
        self.flows = {
            flow: FlowRun(FlowState.PAUSED if flow in paused else FlowState.STARTING)
            for flow in flows
        }
        self.once = once
        self.stopping = False
        self.halted = False

    def step(self, tick: Tick) -> list[Action]:
        if self.halted or self.stopping:
            return []
        if tick.lease_lost is not None:
            self.halted = self.stopping = True
            line = f"{tick.lease_lost}; stopping its copies so that no two drivers write"
            return [Action(Do.REPORT, line=line, level="warning"), Action(Do.HALT_ALL)]
        if tick.stop_asked:
            self.stopping = True
            for run in self.flows.values():
                run.running = False
            return [Action(Do.STOP_ALL)]
        actions: list[Action] = []
        for flow in sorted(tick.started):
            self._started(flow)
        for flow, why in tick.start_failed.items():
            actions += self._failed(flow, why, tick.now)
        for flow, problem in tick.ended.items():
            actions += self._ended(flow, problem, tick.now)
        if tick.maps is not None:
            for flow, topics in tick.maps.items():
                if flow in self.flows:
                    actions += self._topics(flow, dict(topics))
        actions += self._due(tick.now)
        return actions

    def _started(self, flow: str) -> None:
        run = self.flows[flow]
        run.running = True
        run.state, run.error, run.retry_at = FlowState.RUNNING, None, None

    def _failed(self, flow: str, why: str, now: float) -> list[Action]:
        """The copy ended on an error, or could not start: again after a backoff."""
        run = self.flows[flow]
        run.running, run.error = False, why
        run.state = FlowState.FAILED if self.once else FlowState.RESTARTING
        run.retry_at = None if self.once else now + backoff(run.restarts)
        line = f"{flow} failed: {why}"
        return [Action(Do.REPORT, flow, line=line, event="query.failed", level="error")]

    def _ended(self, flow: str, problem: str | None, now: float) -> list[Action]:
        run = self.flows[flow]
        if problem is not None:
            return self._failed(flow, problem, now)
        run.running, run.state, run.error = False, FlowState.DONE, None
        return []

    def _topics(self, flow: str, topics: dict[str, str]) -> list[Action]:
        """The flow's topics as the sources have them now."""
        run = self.flows[flow]
        before, run.topics = run.topics, topics
        if run.state in (FlowState.DONE, FlowState.FAILED, FlowState.PAUSED):
            return []
        if run.running:
            if not topics:
                run.running, run.state = False, FlowState.WAITING_FOR_TOPICS
                return [Action(Do.STOP, flow)]
            # the sources changed (a topic, or a partition of one): the loop takes them as they
            # are now, nothing restarts (and nothing moves when nothing did)
            added = ", ".join(sorted(set(topics) - set(before or {})))
            said = [f"{flow}: new topic(s) {added}; copying them too"] if added else []
            return [*self._said(flow, said, "topics.discovered"), Action(Do.JOIN, flow, topics)]
        if run.state is FlowState.RESTARTING:
            return []  # its backoff decides when it starts (on the newest topics)
        if not topics:
            run.state = FlowState.DONE if self.once else FlowState.WAITING_FOR_TOPICS
            return []
        run.running = True  # starting: the next tick says whether it started
        return [Action(Do.START, flow, topics)]

    def _due(self, now: float) -> list[Action]:
        actions = []
        for flow, run in self.flows.items():
            if run.state is not FlowState.RESTARTING or run.retry_at is None or now < run.retry_at:
                continue
            run.restarts += 1
            run.retry_at = None
            line = f"{flow}: restarting from where it stopped (attempt {run.restarts})"
            actions.append(
                Action(Do.REPORT, flow, line=line, event="query.restart", level="warning")
            )
            if run.topics:
                run.running = True
                actions.append(Action(Do.START, flow, run.topics))
            else:
                run.state = FlowState.WAITING_FOR_TOPICS
        return actions

    @staticmethod
    def _said(flow: str, lines: list[str], event: str) -> list[Action]:
        return [Action(Do.REPORT, flow, line=line, event=event) for line in lines]

    # -- what the driver reports ------------------------------------------------------------

    def running(self) -> bool:
        """Whether any copy runs (or may start again): `--once` waits while so."""
        return any(run.running or run.state is FlowState.RESTARTING for run in self.flows.values())

    def run_state(self) -> FlowState:
        """The driver's own state, for its status record."""
        if self.halted or self.stopping:
            return FlowState.STOPPING
        return FlowState.RUNNING

    def finish(self) -> FlowState:
        """Every copy has stopped: each flow's last state, and the driver's."""
        failed = any(run.state is FlowState.FAILED for run in self.flows.values())
        if self.once and not self.stopping:
            return FlowState.FAILED if failed else FlowState.DONE
        for run in self.flows.values():
            run.running = False
            if not self.once:
                run.state = FlowState.STOPPED
        return FlowState.FAILED if (self.once and (failed or self.stopping)) else FlowState.STOPPED

    def exit_code(self) -> int:
        """`--once`: 0 when every flow copied what its source held; continuous: 0."""
        if not self.once:
            return 0
        failed = any(run.state is FlowState.FAILED for run in self.flows.values())
        return 1 if failed or self.stopping else 0


class Cadence:
    """When each of the continuous driver's periodic chores is due: `due(now)` names those
    whose time has come and schedules their next turn (`every` seconds later; `first` is the
    first turn, as seconds after `start`; a chore without one is due at once). A chore with a
    `longest` wait backs off while it finds nothing to do: `settle(chore, False, now)` doubles
    its wait up to that, `settle(chore, True, now)` brings it back to `every`."""

    def __init__(
        self,
        every: Mapping[str, float],
        start: float,
        first: Mapping[str, float] | None = None,
        longest: Mapping[str, float] | None = None,
    ) -> None:
        self.every = dict(every)
        self.longest = dict(longest or {})
        self.wait = dict(every)  # each chore's wait now
        self.next = {chore: start + (first or {}).get(chore, 0.0) for chore in every}

    def due(self, now: float) -> frozenset[str]:
        found = frozenset(chore for chore, at in self.next.items() if now >= at)
        for chore in found:
            self.next[chore] = now + self.wait[chore]
        return found

    def next_turn(self) -> float:
        """When the next chore is due (as `now`)."""
        return min(self.next.values(), default=float("inf"))

    def settle(self, chore: str, changed: bool, now: float, ran: bool = True) -> None:
        """What the chore's last turn found: something changed (back to its beat, even when it
        did not run: a change made otherwise), or nothing (when it `ran`, its wait doubles, up
        to its `longest`); its next turn counts from `now`."""
        if not (ran or changed):
            return
        if changed:
            wait = self.every[chore]
        else:
            wait = min(self.wait[chore] * 2, self.longest.get(chore, self.every[chore]))
        self.wait[chore] = wait
        self.next[chore] = min(self.next[chore], now + wait) if changed else now + wait
