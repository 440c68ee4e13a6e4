"""The run-state records of topo-runs.internal and their replay (topology.core.runstate)."""

import json
from typing import Any

import pytest

from topology.core import runstate
from topology.core.runstate import TTL_MS, Book, LeaseState, next_claim


class Log:
    """Records appended in order, fed to a Book the way the adapter feeds it."""

    def __init__(self) -> None:
        self.book = Book()
        self.offset = 0

    def put(self, owner: str, kind: str, value: dict[str, Any] | None, at_ms: int) -> int:
        encoded = None if value is None else runstate.encode(value)
        return self.raw(runstate.record_key(owner, kind), encoded, at_ms)

    def raw(self, key: bytes | None, value: bytes | None, at_ms: int) -> int:
        offset = self.offset
        self.book.feed(key, value, at_ms, offset)
        self.offset += 1
        return offset

    def lease(self, holder: str, term: int, at_ms: int, released: bool = False) -> None:
        """A claim of `term` by `holder`."""
        record = runstate.lease_record(holder, term, released=released, claim=True)
        self.put("prod", "lease", record, at_ms)

    def renew(self, holder: str, term: int, at_ms: int, released: bool = False) -> None:
        """A renewal (or, released, the release) of `term` by `holder`, who won it."""
        self.put("prod", "lease", runstate.lease_record(holder, term, released=released), at_ms)


def test_keys_and_values_read_back_as_written() -> None:
    assert runstate.record_key("prod", "jobs") == b"prod/jobs"
    assert runstate.parse_key(b"prod/jobs") == ("prod", "jobs")
    assert runstate.parse_key(b"team/a/lease") == ("team/a", "lease")  # the last slash splits
    value = {"holder": "h:1:abc", "term": 3, "released": False, "note": "ünï"}
    assert runstate.decode(runstate.encode(value)) == value
    with pytest.raises(ValueError):
        runstate.record_key("prod", "nonsense")
    with pytest.raises(ValueError):
        runstate.record_key("", "jobs")


def test_the_first_claim_makes_its_holder_current() -> None:
    log = Log()
    assert log.book.lease("prod") is None
    log.lease("a", 1, 1_000)
    assert log.book.lease("prod") == LeaseState("a", 1, 1_000, released=False)
    assert log.book.lease("other") is None


def test_renewals_by_the_holder_move_its_time() -> None:
    log = Log()
    log.lease("a", 1, 1_000)
    log.renew("a", 1, 3_000)
    log.renew("a", 1, 5_000)
    assert log.book.lease("prod") == LeaseState("a", 1, 5_000, released=False)
    assert log.book.lease("prod").expires_at_ms == 5_000 + TTL_MS  # type: ignore[union-attr]


def test_a_racing_claim_for_the_same_term_loses() -> None:
    log = Log()
    log.lease("a", 1, 1_000)
    log.lease("b", 1, 1_001)  # b read an empty log too: its claim landed second
    assert log.book.lease("prod") == LeaseState("a", 1, 1_000, released=False)
    # Two claimants of term 2 after a's release: the first in the log wins.
    log.renew("a", 1, 2_000, released=True)
    log.lease("b", 2, 2_100)
    log.lease("c", 2, 2_101)
    assert log.book.lease("prod") == LeaseState("b", 2, 2_100, released=False)


def test_a_claim_within_the_ttl_of_a_live_lease_is_ignored() -> None:
    log = Log()
    log.lease("a", 1, 1_000)
    log.lease("b", 2, 1_000 + TTL_MS)  # exactly the TTL: not more than it
    assert log.book.lease("prod").holder == "a"  # type: ignore[union-attr]
    log.renew("a", 1, 1_000 + TTL_MS + 1)  # a renews; it never noticed
    assert log.book.lease("prod") == LeaseState("a", 1, 1_000 + TTL_MS + 1, released=False)


def test_a_claim_more_than_the_ttl_after_the_last_renewal_takes_over() -> None:
    log = Log()
    log.lease("a", 1, 1_000)
    log.renew("a", 1, 4_000)
    log.lease("b", 2, 4_000 + TTL_MS + 1)  # broker time, not anyone's clock
    assert log.book.lease("prod") == LeaseState("b", 2, 4_000 + TTL_MS + 1, released=False)


def test_release_lets_the_next_term_take_over_at_once() -> None:
    log = Log()
    log.lease("a", 1, 1_000)
    log.renew("a", 1, 1_500, released=True)
    assert log.book.lease("prod") == LeaseState("a", 1, 1_500, released=True)
    log.renew("a", 1, 1_600)  # a released lease is not renewed back
    assert log.book.lease("prod").released  # type: ignore[union-attr]
    log.lease("b", 2, 1_700)
    assert log.book.lease("prod") == LeaseState("b", 2, 1_700, released=False)


def test_a_stale_holders_renewals_after_a_takeover_are_ignored() -> None:
    log = Log()
    log.lease("a", 1, 1_000)
    log.lease("b", 2, 1_000 + TTL_MS + 1)
    log.renew("a", 1, 1_000 + TTL_MS + 2)  # a was paused and renews late
    log.renew("a", 1, 1_000 + TTL_MS + 2, released=True)  # nor can it release b's lease
    assert log.book.lease("prod") == LeaseState("b", 2, 1_000 + TTL_MS + 1, released=False)
    log.lease("a", 2, 1_000 + 2 * TTL_MS + 10)  # a claims b's term, as if it were free
    log.lease("a", 4, 1_000 + 3 * TTL_MS + 10)  # a skipped term
    assert log.book.lease("prod").holder == "b"  # type: ignore[union-attr]
    # b itself stops renewing: a may take over with term 3 after the TTL.
    log.lease("a", 3, 1_000 + 3 * TTL_MS + 10)
    assert log.book.lease("prod") == LeaseState("a", 3, 1_000 + 3 * TTL_MS + 10, False)


def test_the_holder_may_claim_its_own_next_term() -> None:
    log = Log()
    log.lease("a", 1, 1_000)
    log.lease("a", 2, 1_100)
    assert log.book.lease("prod") == LeaseState("a", 2, 1_100, released=False)


def test_next_claim_is_the_next_term() -> None:
    book = Book()
    first = {"holder": "me", "term": 1, "claim": True, "released": False}
    assert next_claim(book, "prod", "me") == first
    book.feed(b"prod/lease", runstate.encode(runstate.lease_record("a", 7)), 10, 0)
    claim = next_claim(book, "prod", "me", at=12.5)
    assert claim == {
        "holder": "me",
        "term": 8,
        "claim": True,
        "released": False,
        "renewed_at": 12.5,
    }


def test_readers_agree_after_compaction_left_a_lost_claim_as_the_oldest_record() -> None:
    """a and b race for term 6; a wins and renews. Compaction may keep b's lost claim as the
    only older record of the key: a reader starting there must still name a, as one that read
    the whole log does."""
    whole = Log()
    whole.lease("z", 5, 1_000)
    whole.lease("a", 6, 1_000 + TTL_MS + 1)
    whole.lease("b", 6, 1_000 + TTL_MS + 2)  # lost the race
    for at in range(TTL_MS + 3_000, TTL_MS + 60_000, 2_000):
        whole.renew("a", 6, 1_000 + at)
    compacted = Log()
    compacted.lease("b", 6, 1_000 + TTL_MS + 2)  # all that is left before a's renewals
    for at in range(TTL_MS + 3_000, TTL_MS + 60_000, 2_000):
        compacted.renew("a", 6, 1_000 + at)
    assert whole.book.lease("prod") == compacted.book.lease("prod")
    assert compacted.book.lease("prod").holder == "a"  # type: ignore[union-attr]
    # And a third claimant, reading the compacted log, cannot take a's live lease.
    compacted.lease("c", 7, 1_000 + TTL_MS + 60_000)
    whole.lease("c", 7, 1_000 + TTL_MS + 60_000)
    assert whole.book.lease("prod") == compacted.book.lease("prod")
    assert compacted.book.lease("prod").holder == "a"  # type: ignore[union-attr]


def test_the_newest_jobs_status_and_stop_are_kept_per_owner() -> None:
    log = Log()
    first = log.put("prod", "jobs", {"format": "1", "n": 1}, 100)
    log.put("test", "jobs", {"format": "1", "n": 9}, 150)
    second = log.put("prod", "jobs", {"format": "1", "n": 2}, 200)
    log.put("prod", "status", {"state": "running"}, 300)
    jobs = log.book.jobs("prod")
    assert jobs == runstate.Entry({"format": "1", "n": 2}, second, 200)
    assert first < second
    assert log.book.jobs("test").value["n"] == 9  # type: ignore[union-attr]
    assert log.book.status("prod") == runstate.Entry({"state": "running"}, 3, 300)
    assert log.book.stop("prod") is None
    assert log.book.owners() == ["prod", "test"]


def test_a_stop_applies_only_when_newer_than_the_newest_jobs() -> None:
    log = Log()
    assert not log.book.stop_applies("prod")
    log.put("prod", "jobs", {"n": 1}, 100)
    assert not log.book.stop_applies("prod")
    log.put("prod", "stop", {"by": "h:1", "reason": "maintenance"}, 200)
    assert log.book.stop_applies("prod")
    assert log.book.stop("prod").value["reason"] == "maintenance"  # type: ignore[union-attr]
    log.put("prod", "jobs", {"n": 2}, 300)  # a newer apply resumes
    assert not log.book.stop_applies("prod")
    log.put("prod", "stop", {"by": "h:2"}, 400)
    assert log.book.stop_applies("prod")
    assert not log.book.stop_applies("test")  # per owner


def test_a_stop_without_any_jobs_applies() -> None:
    log = Log()
    log.put("prod", "stop", {"by": "h:1"}, 100)
    assert log.book.stop_applies("prod")


def test_a_tombstone_forgets_jobs_status_and_stop_but_not_the_lease() -> None:
    log = Log()
    log.put("prod", "jobs", {"n": 1}, 100)
    log.put("prod", "stop", {"by": "x"}, 110)
    log.lease("a", 1, 120)
    log.put("prod", "jobs", None, 130)
    log.put("prod", "stop", None, 140)
    log.put("prod", "lease", None, 150)
    assert log.book.jobs("prod") is None
    assert log.book.stop("prod") is None
    assert not log.book.stop_applies("prod")
    assert log.book.lease("prod") == LeaseState("a", 1, 120, released=False)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, b"{}"),
        (b"no-slash", b"{}"),
        (b"/jobs", b"{}"),
        (b"prod/unknown", b"{}"),
        (b"\xff\xfe/jobs", b"{}"),
        (b"prod/jobs", b"{not json"),
        (b"prod/jobs", b"[1, 2]"),
        (b"prod/jobs", b"\xff"),
        (b"prod/status", b'"running"'),
        (b"prod/lease", b'{"term": 2}'),
        (b"prod/lease", b'{"holder": "x", "term": 0}'),
        (b"prod/lease", b'{"holder": "x", "term": true}'),
        (b"prod/lease", b'{"holder": "x", "term": "2"}'),
        (b"prod/lease", b'{"holder": "", "term": 2}'),
        (b"prod/lease", b'{"holder": "x", "term": 2, "released": "yes"}'),
    ],
)
def test_a_record_topo_did_not_write_is_skipped(key: bytes | None, value: bytes) -> None:
    log = Log()
    log.put("prod", "jobs", {"n": 1}, 100)
    log.lease("a", 1, 100)
    log.raw(key, value, 200_000)
    assert log.book.skipped == 1
    assert log.book.jobs("prod") == runstate.Entry({"n": 1}, 0, 100)
    assert log.book.lease("prod") == LeaseState("a", 1, 100, released=False)
    assert log.book.status("prod") is None
    log.put("prod", "jobs", {"n": 2}, 300)  # and the replay goes on
    assert log.book.jobs("prod").value == {"n": 2}  # type: ignore[union-attr]
    assert log.book.next_offset == 4


def test_a_lease_record_without_a_broker_timestamp_is_skipped() -> None:
    book = Book()
    book.feed(b"prod/lease", runstate.encode(runstate.lease_record("a", 1)), -1, 0)
    assert book.lease("prod") is None
    assert book.skipped == 1


def test_records_fed_again_are_ignored() -> None:
    book = Book()
    lease = runstate.encode(runstate.lease_record("a", 1))
    book.feed(b"prod/lease", lease, 1_000, 5)
    book.feed(b"prod/jobs", json.dumps({"n": 1}).encode(), 1_100, 6)
    book.feed(b"prod/jobs", json.dumps({"n": 0}).encode(), 900, 4)  # before: already past
    book.feed(b"prod/jobs", json.dumps({"n": 0}).encode(), 1_100, 6)  # the same again
    assert book.jobs("prod") == runstate.Entry({"n": 1}, 6, 1_100)
    assert book.next_offset == 7


def test_readers_agree_after_compaction_left_a_claim_that_lost_to_a_live_holder() -> None:
    """b claims term 2 while a, holding term 1, is alive: the claim loses. Compaction may keep
    b's claim as the only older record: a reader starting there still names a."""
    whole, compacted = Log(), Log()
    whole.lease("a", 1, 1_000)
    whole.renew("a", 1, 3_000)
    for log in (whole, compacted):
        log.lease("b", 2, 4_000)  # a renewed 1 s ago: lost
    assert whole.book.lease("prod").holder == "a"  # type: ignore[union-attr]
    for log in (whole, compacted):
        for at in range(5_000, 40_000, 2_000):
            log.renew("a", 1, at)
    assert whole.book.lease("prod") == compacted.book.lease("prod")
    assert compacted.book.lease("prod") == LeaseState("a", 1, 39_000, released=False)
    # A third claimant reading the compacted log does not take a's live lease either.
    for log in (whole, compacted):
        log.lease("c", 2, 40_000)
    assert whole.book.lease("prod") == compacted.book.lease("prod")
    assert compacted.book.lease("prod").holder == "a"  # type: ignore[union-attr]


def test_a_confirmed_claim_is_not_undone_by_the_old_holders_late_renewal() -> None:
    log = Log()
    log.lease("a", 1, 1_000)
    log.lease("b", 2, 1_000 + TTL_MS + 1)  # a's lease expired: b's claim wins
    log.renew("a", 1, 1_000 + TTL_MS + 2)  # a wakes up from a pause
    assert log.book.lease("prod").holder == "b"  # type: ignore[union-attr]
