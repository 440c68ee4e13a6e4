"""The driver's side of the lease (topology/spark/lease_keeper.py), over an in-memory run log:
the watchdog fences a driver that cannot renew, stop requests older than its claim are not
obeyed, newer ones are, and the status published is the main thread's snapshot."""

import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from topology.core import analysis, runstate
from topology.core.errors import KafkaUnavailableError
from topology.kafka import runlog
from topology.spark import lease_keeper
from topology.spark.launch import SUPERVISOR_PID
from topology.telemetry.figures import Figures

TOPOLOGY = """version: 1
name: orders
clusters:
  a: {bootstrap: "127.0.0.1:9001"}
  b: {bootstrap: "127.0.0.1:9002"}
flows:
  - mirror: {from: a, to: b}
"""


class Log:
    """topo-runs.internal in memory; `down` makes every call fail as an unreachable cluster."""

    records: ClassVar[list[tuple[bytes, bytes]]] = []
    opened: ClassVar[list["Log"]] = []

    def __init__(self, config: dict[str, str], owner: str, **_options: object) -> None:
        self.owner = owner
        self.book = runstate.Book()
        self.down = False
        Log.opened.append(self)

    def read(self) -> runstate.Book:
        if self.down:
            raise KafkaUnavailableError("cluster b (127.0.0.1:9002) does not answer")
        for offset in range(self.book.next_offset, len(Log.records)):
            key, value = Log.records[offset]
            self.book.feed(key, value, int(time.time() * 1000), offset)
        return self.book

    def write(self, kind: str, value: dict[str, Any]) -> tuple[int, int]:
        if self.down:
            raise KafkaUnavailableError("cluster b (127.0.0.1:9002) does not answer")
        Log.records.append((runstate.record_key(self.owner, kind), runstate.encode(value)))
        return len(Log.records) - 1, int(time.time() * 1000)

    def close(self) -> None:
        pass


class Query:
    def __init__(self) -> None:
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


class Replication:
    """What LeaseKeeper sees of the Replicator."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.queries = {"a->b": Query()}
        self.stopping = False
        self.snapshot: dict[str, Any] | None = {"owner": "orders", "state": "running"}
        self.figures = Figures("orders", {}, {"a->b": ("a", "b")}, 0.0)
        self.lost: list[str] = []

    def lease_lost(self, why: str) -> None:
        """The leader's decision (ops.replicate: halt every copy), as the Replicator takes it."""
        self.lost.append(why)
        self.stopping = True
        for running in self.queries.values():
            running.stop()


@pytest.fixture
def run_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[lease_keeper.LeaseKeeper]:
    Log.records, Log.opened = [], []
    monkeypatch.setattr(runlog, "RunLog", Log)
    monkeypatch.setattr(lease_keeper, "LEASE_EVERY", 0.1)
    monkeypatch.setattr(lease_keeper.LeaseKeeper, "SELF_FENCE", 0.6)
    monkeypatch.delenv(SUPERVISOR_PID, raising=False)
    loaded = analysis.analyse(TOPOLOGY, "orders.yaml")
    assert loaded.topology is not None
    lines: list[str] = []
    made = lease_keeper.LeaseKeeper(loaded.topology, {"a": {}, "b": {}}, lines.append)
    made.lines = lines  # type: ignore[attr-defined]
    yield made
    made.done.set()


def _until(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_driver_that_cannot_renew_stops_its_queries_within_the_self_fence(
    run_state: lease_keeper.LeaseKeeper,
) -> None:
    assert run_state.acquire()
    replication = Replication()
    run_state.attach(replication)  # type: ignore[arg-type]
    _until(lambda: any(k == b"orders/status" for k, _ in Log.records))  # the snapshot goes out
    Log.opened[0].down = True
    _until(lambda: run_state.fenced)  # by the watchdog: no renewal for SELF_FENCE seconds
    assert replication.stopping and replication.queries["a->b"].stopped
    assert any("could not renew this topology's lease" in why for why in replication.lost)


def test_a_stop_older_than_the_claim_is_not_obeyed_and_a_newer_one_is(
    run_state: lease_keeper.LeaseKeeper,
) -> None:
    Log.records.append((b"orders/stop", runstate.encode({"by": "earlier:1", "requested_at": 1.0})))
    assert run_state.acquire()
    replication = Replication()
    run_state.attach(replication)  # type: ignore[arg-type]
    time.sleep(0.5)  # several renewals
    assert not replication.stopping
    Log.records.append((b"orders/stop", runstate.encode({"by": "ops:2", "requested_at": 2.0})))
    _until(lambda: replication.stopping)
    assert "stop requested by ops:2; stopping" in run_state.lines  # type: ignore[attr-defined]
    assert not run_state.fenced
    run_state.finish("stopped")
    lease = Log.opened[0].read().lease("orders")
    assert lease is not None and lease.released  # released on a clean stop


def test_a_run_log_out_of_reach_is_counted_as_an_error(run_state: lease_keeper.LeaseKeeper) -> None:
    assert run_state.acquire()
    replication = Replication()
    run_state.attach(replication)  # type: ignore[arg-type]
    Log.opened[0].down = True
    _until(lambda: replication.figures.snapshot(0.0).errors.get("state", 0) >= 1)
