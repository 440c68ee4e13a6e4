"""A running replication's state, as records in `topo-runs.internal`, and their replay.

The topic (one partition, compacted, `message.timestamp.type=LogAppendTime`, on the
topology's home cluster) holds, per topology owner, four kinds of record, each keyed
`<owner>/<kind>` and valued a UTF-8 JSON object:

- `jobs`: the jobs document the driver runs (`topology.core.jobs`; kept here as the raw dict).
- `lease`: `{"holder", "term", "claim", "released", "renewed_at"}`, who runs the flows: one
  writer per owner. A claim (`claim: true`) asks for a term; a renewal (`claim: false`) is
  written only by the holder that won it. `renewed_at` is the writer's clock and informative
  only: every decision below uses the broker's timestamps, so machines' clocks do not matter.
- `status`: what the holder says it is doing (state, flows, recent changes).
- `stop`: a request to stop, `{"requested_at", "by", "reason"}`.

`Book` replays the records in log order. A record topo did not write (foreign key, unknown
kind, not JSON, not an object, a lease without holder or term) is counted in
`Book.skipped` and otherwise ignored: it never stops a reader.

The lease rule, over broker timestamps only (the same log gives every reader the same
answer):

1. The first lease record for an owner makes its holder current (released if it says so).
2. A record by the current holder with the current term renews it (its time becomes the
   record's timestamp); `released: true` releases it. A released lease stays released.
3. A claim with term == current term + 1 becomes current when the current lease is released,
   or the claim's timestamp is more than `TTL_MS` after the current lease's last renewal, or
   the claim is by the current holder itself. Otherwise it lost a race and is ignored.
4. A renewal (not a claim) of the current term or a newer one by another holder makes that
   holder current: only the winner of a term renews it. This keeps every reader's answer the
   same after compaction, which may leave a lost claim as the only older record of the key
   (a reader starting there would otherwise take the loser for the holder).
5. When the current lease rests on a claim alone (the first record this reader saw), a
   renewal of an older term by another holder within `TTL_MS` of that claim shows the claim
   lost to a live holder: that holder is current.
6. Everything else (older terms, skipped terms, a fenced holder's renewals) is ignored.

This module is pure: values in, values out.
"""

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

JOBS = "jobs"
LEASE = "lease"
STATUS = "status"
STOP = "stop"
KINDS = (JOBS, LEASE, STATUS, STOP)


class FlowState(StrEnum):
    """A flow's state as the driver reports it (its status record, `topo status`, the
    metrics' state gauge); the driver's own state is one of them too."""

    STARTING = "starting"
    RUNNING = "running"
    WAITING_FOR_TOPICS = "waiting for topics"
    RESTARTING = "restarting"  # failed, started again after a backoff
    PAUSED = "paused"  # `paused: true`: not copied, its positions committed where it stopped
    FAILED = "failed"
    DONE = "done"  # --once: copied what the sources held
    STOPPING = "stopping"
    STOPPED = "stopped"


TTL_MS = 15_000  # a lease not renewed for this long (broker time) may be taken over
RENEW_EVERY_S = 2.0  # how often its holder renews it


@dataclass(frozen=True)
class LeaseState:
    """The current lease of one owner, as the log decides it."""

    holder: str
    term: int
    renewed_at_ms: int  # broker timestamp of the claim or of its last renewal
    released: bool
    # False while it rests on a claim alone, the first lease record this reader saw (what
    # compaction left): rule 5 may still find that the claim lost to a live holder.
    confirmed: bool = field(default=True, compare=False)

    @property
    def expires_at_ms(self) -> int:
        """The broker time after which another holder's claim takes over."""
        return self.renewed_at_ms + TTL_MS


@dataclass(frozen=True)
class Entry:
    """The newest record of one kind for one owner."""

    value: dict[str, Any]
    offset: int
    timestamp_ms: int  # the broker's


@dataclass(frozen=True)
class Claim:
    """A lease record's content."""

    holder: str
    term: int
    released: bool
    claim: bool = False  # asks for the term; False: a renewal or release by its winner


def record_key(owner: str, kind: str) -> bytes:
    """The key of `owner`'s record of `kind`."""
    if kind not in KINDS:
        raise ValueError(f"unknown run-state kind {kind!r} (one of {', '.join(KINDS)})")
    if not owner:
        raise ValueError("a run-state record needs an owner")
    return f"{owner}/{kind}".encode()


def parse_key(key: bytes | None) -> tuple[str, str]:
    """(owner, kind) of a record key; ValueError for a key topo did not write."""
    if key is None:
        raise ValueError("record has no key")
    owner, slash, kind = key.decode("utf-8").rpartition("/")
    if not slash or not owner:
        raise ValueError(f"key {key!r} is not <owner>/<kind>")
    if kind not in KINDS:
        raise ValueError(f"key {key!r}: unknown kind {kind!r}")
    return owner, kind


def encode(value: dict[str, Any]) -> bytes:
    """A record's value: compact, key-sorted UTF-8 JSON."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def decode(value: bytes) -> dict[str, Any]:
    """A record's value read back; ValueError unless it is a UTF-8 JSON object."""
    data = json.loads(value.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"value is a JSON {type(data).__name__}, not an object")
    return data


def read_claim(value: dict[str, Any]) -> Claim:
    """A lease record's content; ValueError for one topo did not write."""
    holder, term = value.get("holder"), value.get("term")
    released = value.get("released", False)
    if not isinstance(holder, str) or not holder:
        raise ValueError("lease without a holder")
    if isinstance(term, bool) or not isinstance(term, int) or term < 1:
        raise ValueError(f"lease term {term!r} is not a positive integer")
    if not isinstance(released, bool):
        raise ValueError(f"lease 'released' {released!r} is not true or false")
    claim = value.get("claim", False)
    if not isinstance(claim, bool):
        raise ValueError(f"lease 'claim' {claim!r} is not true or false")
    return Claim(holder, term, released, claim)


def lease_record(
    holder: str, term: int, *, released: bool = False, at: float | None = None, claim: bool = False
) -> dict[str, Any]:
    """A lease record's value; `at` (the writer's unix time, informative) as `renewed_at`."""
    record: dict[str, Any] = {
        "holder": holder,
        "term": term,
        "claim": claim,
        "released": released,
    }
    if at is not None:
        record["renewed_at"] = at
    return record


class _Owner:
    __slots__ = ("jobs", "lease", "status", "stop")

    def __init__(self) -> None:
        self.jobs: Entry | None = None
        self.status: Entry | None = None
        self.stop: Entry | None = None
        self.lease: LeaseState | None = None


class Book:
    """Every owner's run state, replayed from `topo-runs.internal` in log order."""

    def __init__(self) -> None:
        self._owners: dict[str, _Owner] = {}
        self.next_offset = 0  # the offset after the last record fed
        self.skipped = 0  # records topo did not write (or malformed), ignored

    def feed(self, key: bytes | None, value: bytes | None, timestamp_ms: int, offset: int) -> None:
        """Replay one record. Records must come in log order; one already fed is ignored."""
        if offset < self.next_offset:
            return
        self.next_offset = offset + 1
        try:
            owner, kind = parse_key(key)
            data = None if value is None else decode(value)
            claim = read_claim(data) if kind == LEASE and data is not None else None
        except (ValueError, UnicodeDecodeError):  # JSONDecodeError is a ValueError
            self.skipped += 1
            return
        state = self._owners.setdefault(owner, _Owner())
        if kind == LEASE:
            if claim is None or timestamp_ms < 0:
                self.skipped += 1  # a lease tombstone, or no broker time to judge it by
                return
            state.lease = _decide(state.lease, claim, timestamp_ms)
            return
        # A tombstone (null value) forgets the kind's newest record.
        entry = None if data is None else Entry(data, offset, timestamp_ms)
        setattr(state, kind, entry)

    def owners(self) -> list[str]:
        """Every owner with a record, sorted."""
        return sorted(self._owners)

    def lease(self, owner: str) -> LeaseState | None:
        state = self._owners.get(owner)
        return state.lease if state else None

    def jobs(self, owner: str) -> Entry | None:
        state = self._owners.get(owner)
        return state.jobs if state else None

    def status(self, owner: str) -> Entry | None:
        state = self._owners.get(owner)
        return state.status if state else None

    def stop(self, owner: str) -> Entry | None:
        state = self._owners.get(owner)
        return state.stop if state else None

    def stop_applies(self, owner: str) -> bool:
        """Whether a stop request stands: it is newer (by offset) than the newest jobs."""
        stop, jobs = self.stop(owner), self.jobs(owner)
        return stop is not None and (jobs is None or stop.offset > jobs.offset)


def _decide(current: LeaseState | None, claim: Claim, timestamp_ms: int) -> LeaseState:
    """The lease after one lease record (the module docstring's rule)."""
    if current is None:
        return LeaseState(
            claim.holder, claim.term, timestamp_ms, claim.released, confirmed=not claim.claim
        )
    if claim.holder == current.holder and claim.term == current.term:
        if current.released:
            return current  # released is final: a new term claims it again
        return LeaseState(current.holder, current.term, timestamp_ms, claim.released)
    if not claim.claim and claim.term >= current.term:
        return LeaseState(claim.holder, claim.term, timestamp_ms, claim.released)  # rule 4
    if (
        not claim.claim
        and not current.confirmed
        and claim.term < current.term
        and timestamp_ms - current.renewed_at_ms <= TTL_MS
    ):
        return LeaseState(claim.holder, claim.term, timestamp_ms, claim.released)  # rule 5
    if (
        claim.claim
        and claim.term == current.term + 1
        and (
            current.released
            or claim.holder == current.holder
            or timestamp_ms - current.renewed_at_ms > TTL_MS
        )
    ):
        return LeaseState(claim.holder, claim.term, timestamp_ms, claim.released)
    return current


def next_claim(book: Book, owner: str, me: str, at: float | None = None) -> dict[str, Any]:
    """The lease record `me` writes to claim `owner`'s lease: the current term + 1, or 1."""
    current = book.lease(owner)
    return lease_record(me, 1 if current is None else current.term + 1, at=at, claim=True)
