"""One writer per flow: the lease on a topology's replication, held through `topo-runs.internal`.

A `Leaseholder` claims, renews and releases an owner's lease through a run log (in production
`topology.kafka.runlog.RunLog`; anything with its `read` and `write`). Whether a claim won is
never assumed: it is written, the log is read back, and the replay (`runstate.Book`, broker
timestamps only) says who holds the lease. Every reader of the log reaches the same answer.
"""

import os
import secrets
import socket
import time
from collections.abc import Callable
from typing import Any, Protocol

from topology.core import runstate
from topology.core.runstate import LEASE, LeaseState

POLL_S = runstate.RENEW_EVERY_S  # how often a waiting claimant reads the log again


class RunLogLike(Protocol):
    def read(self) -> runstate.Book: ...

    def write(self, kind: str, value: dict[str, Any]) -> tuple[int, int]: ...


def holder_id() -> str:
    """This process's lease holder id: `<host>:<pid>:<6 random hex digits>`."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def release_for_gone(
    lease: LeaseState | None, host: str, pid: int, at: float | None = None
) -> dict[str, Any] | None:
    """The record that releases `lease` on behalf of its holder, when that holder is the
    process `pid` on `host` and the caller knows it is gone: `topo run` reaped the driver it
    started, whose program was `pid` here. Its successor may then claim the lease at once
    instead of waiting out the TTL (the log's rule 2: a release of the current term by its
    holder). None when the lease is released already, or held by any other process: another
    machine's driver, or another here, may be alive, and only the TTL may end its lease."""
    if lease is None or lease.released:
        return None
    parts = lease.holder.split(":")
    if len(parts) != 3 or parts[0] != host or parts[1] != str(pid):
        return None
    return runstate.lease_record(lease.holder, lease.term, released=True, at=at)


class Leaseholder:
    """Claims `owner`'s lease as `me`; `report` gets one line whenever another holds it.

    Failures of the log (TopoError) are not caught: the caller decides what an unreachable
    cluster means for it.
    """

    def __init__(self, log: RunLogLike, owner: str, me: str, report: Callable[[str], None]) -> None:
        self.log = log
        self.owner = owner
        self.me = me
        self.report = report
        self.term: int | None = None  # the term held, once acquired

    @property
    def held(self) -> bool:
        return self.term is not None

    def acquire(
        self,
        wait: bool,
        should_stop: Callable[[], bool],
        sleep: Callable[[float], None] = time.sleep,
    ) -> bool:
        """Claim the lease; True once the log says it is this holder's.

        Without `wait`, one claim: False when another holds the lease. With `wait`, the log
        is read every 2 s and a claim written again when the lease is released, or when its
        holder's renewals have not moved for longer than the lease's TTL (the claim's broker
        timestamp then decides); False once `should_stop()` says so.
        """
        reported: tuple[str, int] | None = None
        while True:
            book = self.log.read()
            self.log.write(LEASE, self._claim(book))
            lease = self.log.read().lease(self.owner)
            if lease is not None and lease.holder == self.me and not lease.released:
                self.term = lease.term
                return True
            self.term = None
            if lease is not None and (lease.holder, lease.term) != reported:
                reported = (lease.holder, lease.term)
                self.report(self._held_by(lease, wait))
            if not wait or not self._wait_for_chance(lease, should_stop, sleep):
                return False

    def _wait_for_chance(
        self,
        lease: LeaseState | None,
        should_stop: Callable[[], bool],
        sleep: Callable[[float], None],
    ) -> bool:
        """Until a claim could win (True) or `should_stop()` (False). The time counted is only
        a cue for when to try; whether the claim wins is the broker's timestamps' decision."""
        seen = lease
        quiet = 0.0  # seconds slept since the holder's last renewal was seen to move
        while not should_stop():
            sleep(POLL_S)
            quiet += POLL_S
            lease = self.log.read().lease(self.owner)
            if lease is None or lease.released or lease.holder == self.me:
                return True
            if lease != seen:
                seen, quiet = lease, 0.0
            elif quiet * 1000 > runstate.TTL_MS:
                return True
        return False

    def renew(self) -> bool:
        """Renew the lease held; False (and no longer held) when the log says another holds
        it now, or this holder never held it."""
        if self.term is None:
            return False
        record = runstate.lease_record(self.me, self.term, at=time.time())
        self.log.write(LEASE, record)
        lease = self.log.read().lease(self.owner)
        if lease is None or lease.holder != self.me or lease.term != self.term or lease.released:
            self.term = None  # fenced: another holder took over
            return False
        return True

    def release(self) -> None:
        """Let go of the lease held, so another can take it without waiting out the TTL."""
        if self.term is None:
            return
        record = runstate.lease_record(self.me, self.term, released=True, at=time.time())
        self.term = None
        self.log.write(LEASE, record)

    def _claim(self, book: runstate.Book) -> dict[str, Any]:
        return runstate.next_claim(book, self.owner, self.me, at=time.time())

    def _held_by(self, lease: LeaseState, wait: bool) -> str:
        then = "waiting for it to stop or expire" if wait else "not starting another"
        return f"{self.owner}'s replication is held by {lease.holder} (term {lease.term}); {then}"
