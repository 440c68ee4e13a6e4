"""What the run state says to the commands that read it (topology.ops.runs), over Books built
from records the way the run log feeds them."""

from typing import Any

from topology.core import analysis, runstate
from topology.core.jobs import JobsDocument, document, job_views
from topology.core.model import Topology
from topology.core.runstate import TTL_MS, Book
from topology.ops import runs
from topology.ops.runs import LEASE_MARGIN_S
from topology.ops.supervise import Wanted

OWNER = "prod"
T0 = 1_700_000_000.0  # unix seconds: the broker's time of the first record
HELD_FOR = TTL_MS / 1000 + LEASE_MARGIN_S  # how long after a renewal a lease counts as live


def topology(*pairs: tuple[str, str]) -> Topology:
    """A topology named OWNER with a mirror for each (source, target) pair."""
    flows = "".join(f"  - mirror: {{from: {a}, to: {b}}}\n" for a, b in pairs)
    clusters = "clusters:\n  east: {bootstrap: 'h:1'}\n  west: {bootstrap: 'h:2'}\n"
    text = f"version: 1\nname: {OWNER}\n{clusters}flows:{' []' if not pairs else ''}\n{flows}"
    made = analysis.analyse(text, "topology.yaml").topology
    assert made is not None
    return made


EAST_WEST = topology(("east", "west"))


def jobs_of(at: float, made: Topology = EAST_WEST) -> JobsDocument:
    return document(made, at)


class Log:
    """Records appended in order, each at a broker time (unix seconds), fed to a Book."""

    def __init__(self) -> None:
        self.book = Book()
        self.offset = 0

    def put(self, kind: str, value: dict[str, Any], at: float) -> int:
        offset = self.offset
        key = runstate.record_key(OWNER, kind)
        self.book.feed(key, runstate.encode(value), int(at * 1000), offset)
        self.offset += 1
        return offset

    def jobs(self, at: float = T0, made: Topology = EAST_WEST) -> int:
        return self.put("jobs", jobs_of(at, made).to_dict(), at)

    def lease(self, holder: str = "h2:42:x", at: float = T0, released: bool = False) -> None:
        current = self.book.lease(OWNER)
        term = 1 if current is None else current.term
        self.put("lease", runstate.lease_record(holder, term, released=released), at)

    def stop(self, at: float = T0, host: str = "ops", pid: int = 7) -> None:
        self.put("stop", runs.stop_request("topo stop", host, pid, at), at)


# -- lease_live --------------------------------------------------------------------------------


def test_no_lease_is_not_live() -> None:
    assert not runs.lease_live(Book(), OWNER, T0)


def test_a_lease_is_live_until_its_ttl_and_the_margin_pass() -> None:
    log = Log()
    log.lease(at=T0)
    assert runs.lease_live(log.book, OWNER, T0)
    assert runs.lease_live(log.book, OWNER, T0 + TTL_MS / 1000 + 1)  # within the margin
    assert runs.lease_live(log.book, OWNER, T0 + HELD_FOR)
    assert not runs.lease_live(log.book, OWNER, T0 + HELD_FOR + 0.01)
    assert not runs.lease_live(log.book, "another", T0)


def test_a_renewal_keeps_the_lease_live() -> None:
    log = Log()
    log.lease(at=T0)
    log.lease(at=T0 + 10)
    assert runs.lease_live(log.book, OWNER, T0 + 10 + HELD_FOR)


def test_a_released_lease_is_not_live() -> None:
    log = Log()
    log.lease(at=T0)
    log.lease(at=T0 + 1, released=True)
    assert not runs.lease_live(log.book, OWNER, T0 + 1)


# -- running_jobs ------------------------------------------------------------------------------


def test_the_running_jobs_are_the_published_ones_while_the_lease_is_live() -> None:
    log = Log()
    both = topology(("east", "west"), ("west", "east"))
    log.jobs(made=both)
    log.lease(at=T0 + 1)
    found = runs.running_jobs(log.book, OWNER, T0 + 2)
    # as `topo plan` compares them: the same views the topology they were made from gives
    assert found == job_views(both)
    assert found["west->east"]["engine"]["runner"] == "local"


def test_no_jobs_run_without_jobs_or_without_a_lease() -> None:
    assert runs.running_jobs(Book(), OWNER, T0) == {}
    log = Log()
    log.jobs()
    assert runs.running_jobs(log.book, OWNER, T0) == {}
    log = Log()
    log.lease(at=T0)
    assert runs.running_jobs(log.book, OWNER, T0) == {}


def test_no_jobs_run_once_stopped() -> None:
    log = Log()
    log.jobs()
    log.lease(at=T0 + 1)
    log.stop(at=T0 + 2)
    assert runs.running_jobs(log.book, OWNER, T0 + 3) == {}


def test_no_jobs_run_once_the_lease_expired() -> None:
    log = Log()
    log.jobs()
    log.lease(at=T0 + 1)
    assert runs.running_jobs(log.book, OWNER, T0 + 1 + HELD_FOR) != {}
    assert runs.running_jobs(log.book, OWNER, T0 + 1 + HELD_FOR + 1) == {}


def test_no_jobs_run_once_the_lease_is_released() -> None:
    log = Log()
    log.jobs()
    log.lease(at=T0 + 1)
    log.lease(at=T0 + 2, released=True)
    assert runs.running_jobs(log.book, OWNER, T0 + 3) == {}


def test_jobs_of_another_format_are_not_running() -> None:
    log = Log()
    log.put("jobs", {**jobs_of(T0).to_dict(), "format": "99"}, T0)
    log.lease(at=T0 + 1)
    assert runs.running_jobs(log.book, OWNER, T0 + 2) == {}


# -- wanted ------------------------------------------------------------------------------------


def wanted(log: Log, mine_running: bool = False, now: float = T0 + 3) -> Wanted:
    return runs.wanted(log.book, OWNER, mine_running, now)


def test_nothing_is_wanted_without_jobs() -> None:
    assert wanted(Log()) == Wanted(None, None, None, None)


def test_the_jobs_are_wanted_with_their_offset_as_generation() -> None:
    log = Log()
    log.put("status", {"state": "running"}, T0)
    offset = log.jobs(at=T0 + 1)
    result = wanted(log)
    assert offset == 1
    assert result.generation == offset
    assert result.jobs == jobs_of(T0 + 1)
    assert result.stop is None
    assert result.unusable is None


def test_newer_jobs_are_a_new_generation() -> None:
    log = Log()
    first = log.jobs(at=T0)
    second = log.jobs(at=T0 + 1)
    assert wanted(log).generation == second != first


def test_a_standing_stop_says_by_whom_and_when() -> None:
    log = Log()
    log.jobs(at=T0)
    log.stop(at=T0 + 1, host="ops", pid=7)
    result = wanted(log)
    assert result.stop == f"by ops:7 at {runs.when(T0 + 1)}"
    assert result.jobs is not None  # the jobs stay known: the next apply resumes them
    log.jobs(at=T0 + 2)  # a later apply supersedes the stop
    assert wanted(log).stop is None


def test_jobs_that_are_not_what_the_file_here_makes_wait_and_say_what_differs() -> None:
    log = Log()
    log.jobs()
    assert runs.wanted(log.book, OWNER, False, T0 + 3, job_views(EAST_WEST)).unusable is None
    both = job_views(topology(("east", "west"), ("west", "east")))
    result = runs.wanted(log.book, OWNER, False, T0 + 3, both, "prod.yaml")
    assert result.jobs is not None and result.unusable == (
        f"the jobs published at {runs.when(T0)} are not what prod.yaml makes here (its flow "
        "west->east is not published): deploy the applied revision here, or apply this one"
    )
    forged = {"east->west": {**job_views(EAST_WEST)["east->west"], "record_filter": "true"}}
    assert (
        runs.first_difference(forged, job_views(EAST_WEST)) == "east->west: record_filter differs"
    )


def test_jobs_without_flows_are_unusable() -> None:
    log = Log()
    log.jobs(made=topology())
    assert wanted(log).unusable == "the published jobs have no flows"


def test_jobs_of_another_format_are_unusable_and_say_why() -> None:
    log = Log()
    value = {**jobs_of(T0).to_dict(), "format": "99"}
    offset = log.put("jobs", value, T0)
    result = wanted(log)
    assert (result.jobs, result.generation) == (value, offset)
    assert result.unusable is not None
    assert result.unusable.startswith("the published jobs: jobs document format '99'")


def test_a_lease_held_elsewhere_is_reported_only_while_our_driver_is_not_running() -> None:
    log = Log()
    log.jobs(at=T0)
    log.lease("h2:42:x", at=T0 + 1)
    line = "another driver (h2:42:x) holds this topology's lease and renews it"
    assert wanted(log, mine_running=False).unusable == line
    assert wanted(log, mine_running=True).unusable is None
    # The line stays the same while the lease ages (the supervisor repeats only new lines).
    assert wanted(log, now=T0 + 1 + HELD_FOR).unusable == line


def test_an_expired_or_released_lease_is_not_held_elsewhere() -> None:
    log = Log()
    log.jobs(at=T0)
    log.lease("h2:42:x", at=T0 + 1)
    assert wanted(log, now=T0 + 1 + HELD_FOR + 1).unusable is None
    log.lease("h2:42:x", at=T0 + 2, released=True)
    assert wanted(log, now=T0 + 3).unusable is None


# -- stop_request ------------------------------------------------------------------------------


def test_a_stop_request_says_when_by_whom_and_why() -> None:
    assert runs.stop_request("topo stop", "ops", 7, T0) == {
        "requested_at": T0,
        "by": "ops:7",
        "reason": "topo stop",
    }


def test_when_is_a_question_mark_for_anything_but_a_time() -> None:
    assert runs.when(None) == "?"
    assert runs.when("yesterday") == "?"
    assert runs.when(T0)[:4] == "2023"


def test_runs_here_only_when_the_newest_status_is_this_drivers_saying_it_runs() -> None:
    log = Log()
    assert not runs.runs_here(log.book, OWNER, 4242)  # no status yet
    log.put("status", {"driver_pid": 4242, "state": "starting"}, T0)
    assert not runs.runs_here(log.book, OWNER, 4242)
    log.put("status", {"driver_pid": 4242, "state": "running"}, T0 + 2)
    assert runs.runs_here(log.book, OWNER, 4242)
    assert not runs.runs_here(log.book, OWNER, 5000)  # its successor has not said so yet
    assert not runs.runs_here(log.book, OWNER, None)  # its program has not started
