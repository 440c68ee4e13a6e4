"""What the run state in `topo-runs.internal` says, for the commands that read it.

Pure: functions over a replayed `runstate.Book` and an explicit `now` (this machine's unix
time, seconds); the caller reads the log and the clock. `topo run` asks `wanted` every tick,
`topo plan`/`apply` ask `running_jobs` (what the running driver runs), `topo status`, `stop`
and `apply` ask `lease_live`; `stop_request` is the record `topo stop` and `topo apply` write.

A lease is judged live with this machine's clock against the broker's timestamps: renewed
within the lease's TTL plus `LEASE_MARGIN_S`, for clocks that disagree between machines.
"""

import time
from collections.abc import Collection, Mapping
from typing import Any

from topology.core.jobs import JobsFormatError, read_document
from topology.core.runstate import TTL_MS, Book
from topology.ops.supervise import Wanted

LEASE_MARGIN_S = 5.0  # beyond the lease's TTL, for clocks that disagree between machines


def lease_live(book: Book, owner: str, now: float) -> bool:
    """Does a driver hold `owner`'s lease and renew it (not released, renewed lately)?"""
    lease = book.lease(owner)
    if lease is None or lease.released:
        return False
    return now - lease.renewed_at_ms / 1000 <= TTL_MS / 1000 + LEASE_MARGIN_S


def running_jobs(book: Book, owner: str, now: float) -> dict[str, dict[str, Any]]:
    """Each of `owner`'s jobs running now, on any machine, as `jobs.job_views` shows it (what
    `topo plan` compares with the topology's): the jobs published while a driver holds the
    lease and no stop applies; empty otherwise, and for jobs of another format."""
    if not lease_live(book, owner, now) or book.stop_applies(owner):
        return {}
    entry = book.jobs(owner)
    if entry is None:
        return {}
    try:
        return read_document(entry.value).views()
    except JobsFormatError:
        return {}


def runs_here(book: Book, owner: str, driver_pid: int | None) -> bool:
    """Whether the newest status `owner`'s driver published is the program `driver_pid`'s
    (this machine's driver, `topo run` knows its pid) saying it runs."""
    entry = book.status(owner)
    if entry is None or driver_pid is None:
        return False
    return entry.value.get("driver_pid") == driver_pid and entry.value.get("state") == "running"


def wanted(
    book: Book,
    owner: str,
    mine_running: bool,
    now: float,
    made: Mapping[str, Mapping[str, Any]] | None = None,
    file: str = "the topology file",
    trusted: Collection[str] = (),
) -> Wanted:
    """What the run log asks of `topo run FILE` now (`ops.supervise`): the newest jobs and
    their generation (the jobs record's offset), a standing stop request, and why the jobs
    cannot run here: a document this topo cannot run, no flows, a live lease held by another
    driver while this supervisor's own driver is not running, or jobs that are not what FILE
    makes (`made`, its `jobs.job_views`): whoever may write topo-runs.internal must not make a
    driver run jobs of their own (a record filter is Spark SQL). The jobs are compared as the
    driver runs them, not byte for byte: an edit of FILE that changes nothing they run (a
    comment) changes nothing here. Jobs whose digest is `trusted` (this machine found them to
    be its file's before) are not compared again: an edit not applied yet must not stop, nor
    keep from restarting, the replication that runs what was applied."""
    entry = book.jobs(owner)
    if entry is None:
        return Wanted(None, None)
    stop = None
    if book.stop_applies(owner):
        request = book.stop(owner)
        value = request.value if request is not None else {}
        stop = f"by {value.get('by', '?')} at {when(value.get('requested_at'))}"
    try:
        jobs: Any = read_document(entry.value)
    except JobsFormatError as problem:
        return Wanted(entry.value, entry.offset, stop, f"the published jobs: {problem}")
    unusable = None
    compared = made is not None and jobs.digest not in trusted
    differs = first_difference(jobs.views(), made) if compared and made is not None else None
    if differs is not None:
        unusable = (
            f"the jobs published at {when(jobs.published_at)} are not what {file} makes here "
            f"({differs}): deploy the applied revision here, or apply this one"
        )
    elif not jobs.specs:
        unusable = "the published jobs have no flows"
    elif not mine_running:
        unusable = _held_elsewhere(book, owner, now)
    return Wanted(jobs, entry.offset, stop, unusable)


def first_difference(
    published: Mapping[str, Mapping[str, Any]], made: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """The first way the published jobs differ from the ones a file makes, in words; None
    when they are the same."""
    for flow in sorted(set(published) | set(made)):
        if flow not in made:
            return f"flow {flow} is not in it"
        if flow not in published:
            return f"its flow {flow} is not published"
        ours, theirs = made[flow], published[flow]
        for key in sorted(set(ours) | set(theirs)):
            if ours.get(key) != theirs.get(key):
                return f"{flow}: {key} differs"
    return None


def _held_elsewhere(book: Book, owner: str, now: float) -> str | None:
    """Another driver holds the lease and renewed it lately: starting one would only wait.
    (No age in the line: the supervisor repeats a waiting line only when it changes.)"""
    lease = book.lease(owner)
    if lease is None or not lease_live(book, owner, now):
        return None
    return f"another driver ({lease.holder}) holds this topology's lease and renews it"


def stop_request(reason: str, host: str, pid: int, now: float) -> dict[str, Any]:
    """A stop record's value: when (`now`), by whom (`host:pid`), why."""
    return {"requested_at": now, "by": f"{host}:{pid}", "reason": reason}


def when(at: Any) -> str:
    """A unix time as local date and time; `?` for anything else."""
    if not isinstance(at, int | float):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(at))
