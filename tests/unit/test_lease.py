"""The lease on a topology's replication (topology.ops.lease) over an in-memory run log."""

import re
from collections.abc import Callable
from typing import Any

from topology.core import runstate
from topology.ops.lease import Leaseholder, holder_id, release_for_gone


class Topic:
    """One partition: records in order, each stamped by a broker clock the test moves."""

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes, int]] = []
        self.now_ms = 1_000_000

    def sleep(self, seconds: float) -> None:
        self.now_ms += int(seconds * 1000)

    def leases(self) -> list[dict[str, Any]]:
        return [runstate.decode(v) for k, v, _ in self.records if k.endswith(b"/lease")]


class FakeLog:
    """A RunLog over `Topic`: its own Book, fed incrementally, as the adapter does."""

    def __init__(self, topic: Topic, owner: str = "prod") -> None:
        self.topic = topic
        self.owner = owner
        self.book = runstate.Book()
        self.before_write: Callable[[], None] | None = None

    def read(self) -> runstate.Book:
        for offset in range(self.book.next_offset, len(self.topic.records)):
            key, value, timestamp = self.topic.records[offset]
            self.book.feed(key, value, timestamp, offset)
        return self.book

    def write(self, kind: str, value: dict[str, Any]) -> tuple[int, int]:
        if self.before_write is not None:
            hook, self.before_write = self.before_write, None
            hook()
        key = runstate.record_key(self.owner, kind)
        self.topic.records.append((key, runstate.encode(value), self.topic.now_ms))
        return len(self.topic.records) - 1, self.topic.now_ms


def holder(topic: Topic, me: str) -> tuple[Leaseholder, list[str]]:
    said: list[str] = []
    return Leaseholder(FakeLog(topic), "prod", me, said.append), said


def never() -> bool:
    return False


def test_holder_ids_name_the_host_and_process_and_differ() -> None:
    first, second = holder_id(), holder_id()
    assert re.fullmatch(r".+:\d+:[0-9a-f]{6}", first)
    assert first != second
    assert first.rsplit(":", 1)[0] == second.rsplit(":", 1)[0]


def test_the_first_claim_acquires_and_renewals_keep_it() -> None:
    topic = Topic()
    a, said = holder(topic, "a")
    assert a.acquire(wait=False, should_stop=never)
    assert (a.held, a.term, said) == (True, 1, [])
    topic.sleep(2)
    assert a.renew()
    assert topic.leases()[-1]["term"] == 1
    lease = FakeLog(topic).read().lease("prod")
    assert lease is not None and (lease.holder, lease.renewed_at_ms) == ("a", topic.now_ms)


def test_two_holders_racing_for_the_first_term_one_wins() -> None:
    topic = Topic()
    a, said_a = holder(topic, "a")
    b, said_b = holder(topic, "b")
    results: dict[str, bool] = {}
    # b claims between a's read of the empty log and a's claim: both claim term 1.
    a.log.before_write = lambda: results.update(b=b.acquire(False, never))  # type: ignore[attr-defined]
    results["a"] = a.acquire(wait=False, should_stop=never)
    assert results == {"a": False, "b": True}
    assert [(r["holder"], r["term"]) for r in topic.leases()] == [("b", 1), ("a", 1)]
    assert (a.held, b.held, b.term) == (False, True, 1)
    assert said_b == []
    assert len(said_a) == 1 and "held by b (term 1)" in said_a[0]
    assert b.renew()
    assert not a.renew()  # never held


def test_a_second_holder_is_refused_while_the_first_renews() -> None:
    topic = Topic()
    a, _ = holder(topic, "a")
    b, said = holder(topic, "b")
    assert a.acquire(False, never)
    polls = []

    def sleep(seconds: float) -> None:
        topic.sleep(seconds)
        assert a.renew()  # a renews every 2 s
        polls.append(seconds)

    assert not b.acquire(wait=True, should_stop=lambda: len(polls) >= 20, sleep=sleep)
    assert polls == [2.0] * 20  # 40 s of waiting, well past the TTL
    assert len(said) == 1 and "held by a (term 1)" in said[0] and "waiting" in said[0]
    assert not b.held
    claims_by_b = [r for r in topic.leases() if r["holder"] == "b"]
    assert len(claims_by_b) == 1  # it did not write a losing claim every poll
    assert FakeLog(topic).read().lease("prod").holder == "a"  # type: ignore[union-attr]


def test_acquire_waits_until_a_dead_holders_lease_expires() -> None:
    topic = Topic()
    a, _ = holder(topic, "a")
    b, said = holder(topic, "b")
    assert a.acquire(False, never)
    last_renewal = topic.now_ms  # a dies now
    assert b.acquire(wait=True, should_stop=never, sleep=topic.sleep)
    assert (b.held, b.term) == (True, 2)
    assert len(said) == 1 and "held by a (term 1)" in said[0]
    lease = FakeLog(topic).read().lease("prod")
    assert lease is not None and lease.holder == "b"
    assert lease.renewed_at_ms - last_renewal > runstate.TTL_MS
    claims_by_b = [r for r in topic.leases() if r["holder"] == "b"]
    assert [r["term"] for r in claims_by_b] == [2, 2]  # the lost one, then the winner


def test_acquire_without_wait_takes_over_a_lease_long_expired() -> None:
    topic = Topic()
    a, _ = holder(topic, "a")
    b, said = holder(topic, "b")
    assert a.acquire(False, never)
    topic.sleep(60)  # a crashed a minute ago
    assert b.acquire(wait=False, should_stop=never)
    assert (b.term, said) == (2, [])


def test_acquire_gives_up_when_told_to_stop() -> None:
    topic = Topic()
    a, _ = holder(topic, "a")
    b, said = holder(topic, "b")
    assert a.acquire(False, never)
    asked = []

    def should_stop() -> bool:
        asked.append(True)
        return len(asked) > 3

    assert not b.acquire(wait=True, should_stop=should_stop, sleep=topic.sleep)
    assert len(asked) == 4 and not b.held and len(said) == 1


def test_renew_is_fenced_after_a_takeover() -> None:
    topic = Topic()
    a, _ = holder(topic, "a")
    b, _ = holder(topic, "b")
    assert a.acquire(False, never)
    topic.sleep(20)  # a is paused (a long GC, a lost network) past the TTL
    assert b.acquire(False, never)
    topic.sleep(1)
    assert not a.renew()
    assert not a.held
    assert not a.renew()  # and stays fenced
    assert b.renew()
    assert FakeLog(topic).read().lease("prod").holder == "b"  # type: ignore[union-attr]


def test_release_lets_another_acquire_at_once() -> None:
    topic = Topic()
    a, _ = holder(topic, "a")
    b, said = holder(topic, "b")
    assert a.acquire(False, never)
    a.release()
    assert not a.held
    assert topic.leases()[-1] == {
        "holder": "a",
        "term": 1,
        "claim": False,
        "released": True,
        "renewed_at": topic.leases()[-1]["renewed_at"],
    }
    assert b.acquire(wait=False, should_stop=never)  # no TTL to wait out
    assert (b.term, said) == (2, [])
    assert not a.renew()
    written = len(topic.records)
    a.release()  # not held: writes nothing
    assert len(topic.records) == written


def test_a_waiting_holder_claims_as_soon_as_the_lease_is_released() -> None:
    topic = Topic()
    a, _ = holder(topic, "a")
    b, _ = holder(topic, "b")
    assert a.acquire(False, never)
    polls = []

    def sleep(seconds: float) -> None:
        topic.sleep(seconds)
        polls.append(seconds)
        if len(polls) == 2:
            a.release()
        else:
            a.renew()

    assert b.acquire(wait=True, should_stop=never, sleep=sleep)
    assert (len(polls), b.term) == (2, 2)


def test_a_holder_can_acquire_again_after_releasing() -> None:
    topic = Topic()
    a, _ = holder(topic, "a")
    assert a.acquire(False, never)
    a.release()
    assert a.acquire(False, never)
    assert a.term == 2 and a.renew()


def test_a_gone_drivers_lease_is_released_for_its_successor_without_waiting_out_the_ttl() -> None:
    topic = Topic()
    dead, _ = holder(topic, "h1:4242:abcdef")
    assert dead.acquire(False, never)
    log = FakeLog(topic)
    lease = log.read().lease("prod")
    # `topo run` on h1 reaped the driver whose program was pid 4242: only that lease is freed.
    assert release_for_gone(lease, "h2", 4242) is None  # another machine's holder
    assert release_for_gone(lease, "h1", 4243) is None  # another process here
    record = release_for_gone(lease, "h1", 4242, at=12.5)
    assert record == {
        "holder": "h1:4242:abcdef",
        "term": 1,
        "claim": False,
        "released": True,
        "renewed_at": 12.5,
    }
    log.write(runstate.LEASE, record)
    successor, said = holder(topic, "h1:5000:012345")
    assert successor.acquire(wait=False, should_stop=never)  # at once: no TTL waited out
    assert (successor.term, said) == (2, [])
    assert not dead.renew()  # had it lived, it would be fenced
    assert release_for_gone(log.read().lease("prod"), "h1", 4242) is None  # not its lease now


def test_nothing_is_released_for_a_lease_released_already_or_of_a_foreign_holder_id() -> None:
    topic = Topic()
    a, _ = holder(topic, "h1:4242:abcdef")
    assert a.acquire(False, never)
    a.release()
    assert release_for_gone(FakeLog(topic).read().lease("prod"), "h1", 4242) is None
    assert release_for_gone(None, "h1", 4242) is None
    other = Topic()
    b, _ = holder(other, "a-name:without-a-pid")
    assert b.acquire(False, never)
    assert release_for_gone(FakeLog(other).read().lease("prod"), "a-name", 4242) is None
