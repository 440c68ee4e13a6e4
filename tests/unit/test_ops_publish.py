"""How `topo apply` executes a plan's flow changes (topology.ops.publish), with a run log of
Book records, a fake machine and a fake clock: no Kafka, no process, no Spark."""

from collections.abc import Callable
from typing import Any

import pytest

from topology.core import analysis, runstate
from topology.core.errors import TopoError
from topology.core.jobs import JobsDocument, document
from topology.core.model import Topology
from topology.core.runstate import Book, FlowState
from topology.ops import publish
from topology.ops.publish import Publisher, Started, Startup, started

OWNER = "orders"
T0 = 1_700_000_000.0
TEXT = """version: 1
name: orders
clusters:
  east: {bootstrap: "h:1"}
  west: {bootstrap: "h:2"}
flows:
  - mirror: {from: east, to: west}
    start: mm2
  - mirror: {from: west, to: east}
"""


def topology(text: str = TEXT) -> Topology:
    made = analysis.analyse(text, "orders.yaml").topology
    assert made is not None
    return made


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Log:
    """topo-runs.internal: records appended at the clock's time; `driver` runs on each read
    (a driver elsewhere that writes its lease and status as time passes)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.book = Book()
        self.offset = 0
        self.written: list[tuple[str, dict[str, Any]]] = []
        self.driver: Callable[[Log], None] = lambda log: None

    def put(self, kind: str, value: dict[str, Any]) -> None:
        key = runstate.record_key(OWNER, kind)
        self.book.feed(key, runstate.encode(value), int(self.clock() * 1000), self.offset)
        self.offset += 1

    def write(self, kind: str, value: dict[str, Any]) -> object:
        self.written.append((kind, value))
        self.put(kind, value)
        return None

    def read(self) -> Book:
        self.driver(self)
        return self.book

    def lease(self) -> None:
        self.put("lease", runstate.lease_record("h2:42:x", 1))

    def status(self, published_at: float, *states: tuple[str, str], error: str = "") -> None:
        flows = [{"flow": flow, "state": state, "error": error or None} for flow, state in states]
        self.put("status", {"state": "running", "jobs_published_at": published_at, "flows": flows})


class Host:
    def __init__(self, local: int | None = None, mm2: str | None = None) -> None:
        self.local = local
        self.mm2 = mm2
        self.asked: list[str] = []
        self.done: list[str] = []
        self.supervisor_exit: int | None = None

    def local_supervisor(self) -> int | None:
        return self.local

    def start_supervisor(self) -> Callable[[], int | None]:
        self.done.append("started")
        return lambda: self.supervisor_exit

    def alive(self, pid: int) -> Callable[[], int | None]:
        return lambda: None

    def abandon(self) -> None:
        self.done.append("abandoned")

    def stop_local(self) -> None:
        self.done.append("stopped here")

    def mm2_running(self, flow: str) -> str | None:
        self.asked.append(flow)
        return self.mm2

    def who(self) -> tuple[str, int]:
        return ("ops", 7)


def jobs(at: float = T0, starts: dict[str, Any] | None = None) -> JobsDocument:
    return document(topology(), at, starts)


def publisher(log: Log, host: Host, made: JobsDocument, runner: str = "local") -> Publisher:
    lines: list[str] = []
    found = Publisher(
        lambda: made,
        runner,
        "west",
        lambda: log,
        host,
        lines.append,
        clock=log.clock,
        sleep=log.clock.sleep,
    )
    found.lines = lines  # type: ignore[attr-defined]
    return found


# -- started -----------------------------------------------------------------------------------


def test_started_waits_for_a_lease_and_a_status_of_these_jobs_with_every_flow_running() -> None:
    clock = Clock()
    log = Log(clock)
    assert started(log.book, OWNER, T0, clock()).why == "no driver holds the lease yet"
    log.lease()
    assert (
        started(log.book, OWNER, T0, clock()).why == "the driver has not reported on these jobs yet"
    )
    log.status(T0 - 5, ("east->west", FlowState.RUNNING))  # the previous jobs' driver
    assert started(log.book, OWNER, T0, clock()) == Started(
        Startup.WAITING, "the driver has not reported on these jobs yet"
    )
    log.status(T0, ("east->west", FlowState.RUNNING), ("west->east", FlowState.STARTING))
    assert started(log.book, OWNER, T0, clock()) == Started(Startup.WAITING, "west->east starting")
    log.status(T0, ("east->west", FlowState.RUNNING), ("west->east", "waiting for topics"))
    assert started(log.book, OWNER, T0, clock()).state is Startup.RUNNING
    log.status(T0, ("east->west", FlowState.RESTARTING), error="Broker: unreachable")
    assert started(log.book, OWNER, T0, clock()) == Started(
        Startup.FAILED, "east->west: Broker: unreachable"
    )
    clock.now += 60  # the lease lapsed: whatever the last status said, nothing runs
    assert started(log.book, OWNER, T0, clock()).state is Startup.WAITING


# -- Publisher ---------------------------------------------------------------------------------


def test_the_first_flow_change_publishes_once_and_apply_returns_when_the_flows_run() -> None:
    clock = Clock()
    log = Log(clock)
    made = jobs()

    def supervisor_here_restarts_its_driver(log: Log) -> None:
        if clock() >= T0 + 3 and log.book.status(OWNER) is None:
            log.lease()
            log.status(made.published_at, ("east->west", "running"), ("west->east", "running"))

    log.driver = supervisor_here_restarts_its_driver
    host = Host(local=4242)
    runner = publisher(log, host, made)
    runner.execute()
    runner.execute()  # the plan's second flow change: already done
    assert [kind for kind, _value in log.written] == ["jobs"]
    assert log.written[0][1]["digest"] == made.digest
    assert runner.lines[0] == "published 2 job(s) to topo-runs.internal on west"  # type: ignore[attr-defined]
    assert clock() >= T0 + 3  # it waited for the driver's own word
    assert runner.lines[-1] == "the driver reports its flows running"  # type: ignore[attr-defined]
    assert host.done == []


def test_a_supervisor_started_here_that_exits_first_is_an_error_and_nothing_is_left() -> None:
    log = Log(Clock())
    host = Host()
    host.supervisor_exit = 1
    with pytest.raises(TopoError, match="supervisor exited"):
        publisher(log, host, jobs()).execute()
    assert host.done == ["started", "abandoned"]


def test_a_driver_that_never_reports_times_out_and_the_supervisor_is_stopped() -> None:
    log = Log(Clock())
    host = Host()
    with pytest.raises(TopoError, match="did not report running in 180s"):
        publisher(log, host, jobs()).execute()
    assert host.done == ["started", "abandoned"]


def test_the_external_runner_only_publishes() -> None:
    log = Log(Clock())
    host = Host()
    publisher(log, host, jobs(), runner="external").execute()
    assert [kind for kind, _ in log.written] == ["jobs"] and host.done == []


def test_mm2_is_asked_again_only_for_the_flows_that_take_over_from_it() -> None:
    """Time passes between plan and apply (a confirmation, a saved plan): MM2 found running
    again stops the flow's start before anything is published."""
    log = Log(Clock())
    host = Host(mm2="connector on worker w1 (RUNNING)")
    plain = publisher(log, host, jobs(), runner="external")
    plain.execute()
    assert host.asked == []  # no flow starts from MM2's positions: nothing to ask
    log = Log(Clock())
    resumed = publisher(log, host, jobs(starts={"east->west": {"orders": {0: 100}}}))
    with pytest.raises(
        TopoError,
        match=r"MirrorMaker 2 runs flow east->west again: .* shows "
        r"its connector on worker w1 \(RUNNING\)",
    ):
        resumed.execute()
    assert host.asked == ["east->west"] and log.written == [] and not resumed.handled


def test_a_topology_left_without_flows_asks_the_replication_to_stop() -> None:
    log = Log(Clock())
    host = Host()
    empty = document(topology(TEXT.split("flows:")[0] + "flows: []\n"), T0)
    publisher(log, host, empty).execute()
    [(kind, value)] = log.written
    assert kind == "stop" and value["by"] == "ops:7"
    assert host.done == ["stopped here"]


def test_a_later_publication_keeps_the_start_positions_of_the_previous_one() -> None:
    log = Log(Clock())
    first = jobs(starts={"east->west": {"orders": {0: 100}}})
    publisher(log, Host(), first, runner="external").execute()
    again = publisher(log, Host(), jobs(at=T0 + 1), runner="external")
    again.execute()
    assert again.published is not None
    assert again.published.starts == {"east->west": {"orders": {0: 100}}}


def test_a_driver_elsewhere_is_waited_for_a_while_and_not_having_the_file_yet_is_no_failure() -> (
    None
):
    clock = Clock()
    log = Log(clock)
    log.lease()  # a driver runs on another machine, on the previous jobs

    def renews(log: Log) -> None:
        log.lease()  # it keeps its lease, and never reports on the new jobs

    log.driver = renews
    runner = publisher(log, Host(), jobs())
    runner.execute()
    assert [kind for kind, _ in log.written] == ["jobs"]
    assert clock() >= T0 + publish.ELSEWHERE_TIMEOUT
    assert "starts them once the applied file is deployed there" in runner.lines[-1]  # type: ignore[attr-defined]
