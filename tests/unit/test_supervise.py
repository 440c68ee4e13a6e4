"""The supervision loop of `topo run`, with a fake clock, a scripted run log and fake drivers.

Every test reads the whole log: each line is `<time> <event>`, where the events are the
loop's reports and the fake drivers' `start <jobs>` and `stop`.
"""

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from topology.core.errors import KafkaUnavailableError, TopoError
from topology.ops.supervise import FATAL, LEASE_HELD, Backoff, Wanted, describe_exit, supervise

NONE = Wanted(jobs=None, generation=None)
TICK = inspect.signature(supervise).parameters["tick"].default  # seconds between looks


def jobs(
    generation: int, stop: str | None = None, unusable: str | None = None, running: bool = False
) -> Wanted:
    return Wanted(f"jobs-{generation}", generation, stop, unusable, running)


@dataclass(frozen=True)
class Run:
    """What one started driver does: exit `code` after `seconds` (never, if None)."""

    seconds: float | None = None
    code: int = 0


class World:
    def __init__(
        self,
        script: list[tuple[float, Wanted | Exception]],
        runs: Sequence[Run] = (),
        sigterm_at: float | None = None,
    ) -> None:
        self.now = 0.0
        self.log: list[str] = []
        self.script = script
        self.runs = list(runs)
        self.sigterm_at = sigterm_at
        self.signal_kills_the_driver = False  # Ctrl-C: the whole process group gets SIGINT
        self.reaped_says: str | Exception | None = None  # what `reaped` answers

    def reaped(self) -> str | None:
        self.line("reaped")
        if isinstance(self.reaped_says, Exception):
            raise self.reaped_says
        return self.reaped_says

    def line(self, text: str) -> None:
        self.log.append(f"{self.now:g} {text}")

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        # The fake clock's nap, not a measured time: the loop never naps past one tick
        # (supervise's `tick`), so it notices a stop or a due restart within it.
        assert 0 <= seconds <= TICK
        self.now += seconds
        assert self.now < 10_000, "the loop did not end"

    def wanted(self) -> Wanted:
        current = [value for at, value in self.script if at <= self.now][-1]
        if isinstance(current, Exception):
            raise current
        return current

    def start(self, jobs: object) -> "FakeDriver":
        self.line(f"start {jobs}")
        return FakeDriver(self, self.now, self.runs.pop(0))

    def stopping(self) -> bool:
        return self.sigterm_at is not None and self.now >= self.sigterm_at

    def supervise(self, **options: object) -> int:
        return supervise(
            wanted=self.wanted,
            start=self.start,
            stopping=self.stopping,
            report=lambda message: self.line(message),
            reaped=self.reaped,
            clock=self.clock,
            sleep=self.sleep,
            **options,  # type: ignore[arg-type]
        )


class FakeDriver:
    def __init__(self, world: World, started: float, run: Run) -> None:
        self.world, self.started, self.run = world, started, run
        self.stopped = False

    def poll(self) -> int | None:
        assert not self.stopped
        seconds = self.run.seconds
        if seconds is not None and self.world.now >= self.started + seconds:
            if self.world.signal_kills_the_driver:
                self.world.sigterm_at = self.world.now  # the driver saw the signal first
            return self.run.code
        return None

    def stop(self, timeout: float) -> int:
        assert timeout == 30.0
        self.stopped = True
        self.world.line("stop")
        return 0


def test_the_driver_starts_on_the_first_jobs_published_and_stops_on_sigterm() -> None:
    world = World([(0, NONE), (7, jobs(1))], [Run()], sigterm_at=20)
    assert world.supervise() == 0
    assert world.log == [
        "0 no jobs are published for this topology; waiting",
        "8 starting the driver (generation 1)",
        "8 start jobs-1",
        "20 stop signal received",
        "20 stopping the driver",
        "20 stop",
        "20 the driver stopped (exit 0)",
    ]


def test_a_crash_restarts_at_once_then_after_5_10_20_40_60_60_seconds() -> None:
    world = World([(0, jobs(1))], [Run(0, 1)] * 7 + [Run()], sigterm_at=300)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "2 the driver exited with 1; restarting at once (attempt 1)",
        "2 reaped",
        "2 starting the driver (generation 1)",
        "2 start jobs-1",
        "4 the driver exited with 1; restarting in 5s (attempt 2)",
        "4 reaped",
        "9 starting the driver (generation 1)",
        "9 start jobs-1",
        "11 the driver exited with 1; restarting in 10s (attempt 3)",
        "11 reaped",
        "21 starting the driver (generation 1)",
        "21 start jobs-1",
        "23 the driver exited with 1; restarting in 20s (attempt 4)",
        "23 reaped",
        "43 starting the driver (generation 1)",
        "43 start jobs-1",
        "45 the driver exited with 1; restarting in 40s (attempt 5)",
        "45 reaped",
        "85 starting the driver (generation 1)",
        "85 start jobs-1",
        "87 the driver exited with 1; restarting in 60s (attempt 6)",
        "87 reaped",
        "147 starting the driver (generation 1)",
        "147 start jobs-1",
        "149 the driver exited with 1; restarting in 60s (attempt 7)",
        "149 reaped",
        "209 starting the driver (generation 1)",
        "209 start jobs-1",
        "301 stop signal received",
        "301 stopping the driver",
        "301 stop",
        "301 the driver stopped (exit 0)",
    ]


def test_the_dead_drivers_lease_is_released_before_its_successor_starts() -> None:
    world = World([(0, jobs(1))], [Run(3, -9), Run()], sigterm_at=10)
    world.reaped_says = "released the lease of its driver (pid 4242), gone"
    world.supervise()
    assert world.log[:6] == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "4 the driver exited with -9 (SIGKILL); restarting at once (attempt 1)",
        "4 reaped",
        "4 released the lease of its driver (pid 4242), gone",
        "4 starting the driver (generation 1)",
    ]


def test_a_driver_whose_own_live_lease_the_log_shows_is_reaped_not_waited_for() -> None:
    # The log read in the tick that sees the exit still names the dead driver's lease, live:
    # `wanted` calls it held elsewhere (this loop's driver no longer runs). The exit is dealt
    # with first: its lease freed, the driver restarted at once, no wait for the lease's TTL.
    held = jobs(1, unusable="another driver (h1:4242:abcdef) holds this topology's lease")
    world = World([(0, jobs(1)), (3, held)], [Run(3, -9), Run()], sigterm_at=10)

    def reaped() -> str:
        world.line("reaped")
        world.script.append((world.now, jobs(1)))  # the release is in the log from now on
        return "released the lease of the dead driver (pid 4242)"

    world.reaped = reaped  # type: ignore[method-assign]
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "4 the driver exited with -9 (SIGKILL); restarting at once (attempt 1)",
        "4 reaped",
        "4 released the lease of the dead driver (pid 4242)",
        "4 starting the driver (generation 1)",
        "4 start jobs-1",
        "10 stop signal received",
        "10 stopping the driver",
        "10 stop",
        "10 the driver stopped (exit 0)",
    ]


def test_a_lease_that_cannot_be_released_is_left_to_expire_and_the_restart_goes_on() -> None:
    world = World([(0, jobs(1))], [Run(3, -9), Run()], sigterm_at=10)
    world.reaped_says = KafkaUnavailableError("west did not answer in 3s")
    world.supervise()
    assert world.log[2:6] == [
        "4 the driver exited with -9 (SIGKILL); restarting at once (attempt 1)",
        "4 reaped",
        "4 the dead driver's lease is left to expire: west did not answer in 3s",
        "4 starting the driver (generation 1)",
    ]


def test_a_driver_that_said_it_runs_is_restarted_at_once_however_often_it_dies() -> None:
    # Killed every few seconds, but each time after it said it runs: healthy runs, each crash
    # repaired at once. One that dies before it runs (a crash loop) backs off.
    running = jobs(1, running=True)
    script: list[tuple[float, Wanted | Exception]] = [(0, jobs(1)), (1, running)]
    world = World(script, [Run(3, -9), Run(3, -9), Run(3, -9), Run(0, 1), Run(0, 1), Run()])
    world.sigterm_at = 40
    assert world.supervise() == 0
    exits = [line for line in world.log if "exited" in line]
    assert exits == [
        "4 the driver exited with -9 (SIGKILL); restarting at once (attempt 1)",
        "8 the driver exited with -9 (SIGKILL); restarting at once (attempt 1)",
        "12 the driver exited with -9 (SIGKILL); restarting at once (attempt 1)",
        "14 the driver exited with 1; restarting in 5s (attempt 2)",
        "21 the driver exited with 1; restarting in 10s (attempt 3)",
    ]


def test_a_run_of_reset_after_seconds_resets_the_backoff_and_kills_unexpected_ends_count() -> None:
    runs = [Run(0, -9), Run(0, 0), Run(300, 1), Run(0, 1), Run()]
    world = World([(0, jobs(1))], runs, sigterm_at=400)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "2 the driver exited with -9 (SIGKILL); restarting at once (attempt 1)",
        "2 reaped",
        "2 starting the driver (generation 1)",
        "2 start jobs-1",
        "4 the driver ended (exit 0) without a stop request; restarting in 5s (attempt 2)",
        "4 reaped",
        "9 starting the driver (generation 1)",
        "9 start jobs-1",
        # ran 300 s: healthy, so the next crash starts the backoff over
        "309 the driver exited with 1; restarting at once (attempt 1)",
        "309 reaped",
        "309 starting the driver (generation 1)",
        "309 start jobs-1",
        "311 the driver exited with 1; restarting in 5s (attempt 2)",
        "311 reaped",
        "316 starting the driver (generation 1)",
        "316 start jobs-1",
        "400 stop signal received",
        "400 stopping the driver",
        "400 stop",
        "400 the driver stopped (exit 0)",
    ]


def test_backoff_delays() -> None:
    backoff = Backoff()
    assert [backoff.delay(n) for n in range(1, 9)] == [0, 5, 10, 20, 40, 60, 60, 60]
    assert backoff.delay(10_000) == 60
    assert Backoff(first=1, cap=3).delay(4) == 3


def test_a_new_generation_restarts_the_driver_with_the_new_jobs() -> None:
    world = World([(0, jobs(1)), (9, jobs(2))], [Run(), Run()], sigterm_at=14)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "10 new jobs published (generation 2); restarting",
        "10 stop",
        "10 the driver stopped (exit 0)",
        "10 starting the driver (generation 2)",
        "10 start jobs-2",
        "14 stop signal received",
        "14 stopping the driver",
        "14 stop",
        "14 the driver stopped (exit 0)",
    ]


def test_a_new_generation_during_the_backoff_starts_at_once_with_a_fresh_backoff() -> None:
    runs = [Run(0, 1), Run(0, 1), Run(0, 1), Run(0, 1), Run()]
    world = World([(0, jobs(1)), (6, jobs(2))], runs, sigterm_at=14)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "2 the driver exited with 1; restarting at once (attempt 1)",
        "2 reaped",
        "2 starting the driver (generation 1)",
        "2 start jobs-1",
        "4 the driver exited with 1; restarting in 5s (attempt 2)",
        "4 reaped",
        "6 starting the driver (generation 2)",
        "6 start jobs-2",
        "8 the driver exited with 1; restarting at once (attempt 1)",
        "8 reaped",
        "8 starting the driver (generation 2)",
        "8 start jobs-2",
        "10 the driver exited with 1; restarting in 5s (attempt 2)",
        "10 reaped",
        "14 stop signal received",
    ]


def test_a_stop_request_stops_the_driver_and_returns_0() -> None:
    world = World([(0, jobs(1)), (5, jobs(1, stop="by h1:42 at 12:00:00"))], [Run()])
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "6 stop requested by h1:42 at 12:00:00",
        "6 stopping the driver",
        "6 stop",
        "6 the driver stopped (exit 0)",
    ]


def test_a_stop_request_during_the_backoff_returns_0_without_starting() -> None:
    stop = jobs(1, stop="by h1:42 at 12:00:00")
    world = World([(0, jobs(1)), (5, stop)], [Run(0, 1), Run(0, 1)])
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "2 the driver exited with 1; restarting at once (attempt 1)",
        "2 reaped",
        "2 starting the driver (generation 1)",
        "2 start jobs-1",
        "4 the driver exited with 1; restarting in 5s (attempt 2)",
        "4 reaped",
        "6 stop requested by h1:42 at 12:00:00",
    ]


def test_a_stop_request_while_waiting_for_jobs_returns_0() -> None:
    world = World([(0, NONE), (3, Wanted(None, None, stop="by h1:42 at 12:00:00"))])
    assert world.supervise() == 0
    assert world.log == [
        "0 no jobs are published for this topology; waiting",
        "4 stop requested by h1:42 at 12:00:00",
    ]


def test_a_stop_newest_at_the_start_is_the_standing_state_the_next_apply_resumes() -> None:
    stopped = jobs(1, stop="by h1:42 at 12:00:00")
    script: list[tuple[float, Wanted | Exception]] = [
        (0, stopped),
        (70, jobs(2)),
        (80, jobs(2, stop="by h2:7 at 12:05:00")),
    ]
    world = World(script, [Run()])
    assert world.supervise() == 0
    assert world.log == [
        "0 the replication was stopped (by h1:42 at 12:00:00); the next apply resumes it; waiting",
        "60 the replication was stopped (by h1:42 at 12:00:00); the next apply resumes it; waiting",
        "70 starting the driver (generation 2)",
        "70 start jobs-2",
        "80 stop requested by h2:7 at 12:05:00",
        "80 stopping the driver",
        "80 stop",
        "80 the driver stopped (exit 0)",
    ]


def test_sigterm_during_the_backoff_returns_0_promptly_without_starting() -> None:
    world = World([(0, jobs(1))], [Run(0, 1), Run(0, 1)], sigterm_at=5)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "2 the driver exited with 1; restarting at once (attempt 1)",
        "2 reaped",
        "2 starting the driver (generation 1)",
        "2 start jobs-1",
        "4 the driver exited with 1; restarting in 5s (attempt 2)",
        "4 reaped",
        "6 stop signal received",
    ]


def test_sigterm_that_reached_the_driver_first_is_not_a_crash() -> None:
    world = World([(0, jobs(1))], [Run(4, -2)])
    world.signal_kills_the_driver = True
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "4 the driver exited with -2 (SIGINT)",
        "4 stop signal received",
    ]


@pytest.mark.parametrize(
    ("code", "meaning"), [(2, "the topology is refused"), (3, "the jobs format is refused")]
)
def test_a_fatal_exit_returns_its_code(code: int, meaning: str) -> None:
    assert code in FATAL
    world = World([(0, jobs(1))], [Run(3, code)])
    assert world.supervise() == code
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        f"4 the driver exited with {code} ({meaning}); retrying cannot help",
    ]


def test_a_held_lease_is_retried_every_first_seconds_without_growing_the_backoff() -> None:
    runs = [Run(0, LEASE_HELD)] * 3 + [Run(0, 1), Run()]
    world = World([(0, jobs(1))], runs, sigterm_at=40)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "2 another driver holds the lease; waiting",
        "7 start jobs-1",
        "14 start jobs-1",
        "21 start jobs-1",  # retries for the lease start quietly (no lease of theirs to free)
        "23 the driver exited with 1; restarting at once (attempt 1)",
        "23 reaped",
        "23 starting the driver (generation 1)",
        "23 start jobs-1",
        "41 stop signal received",
        "41 stopping the driver",
        "41 stop",
        "41 the driver stopped (exit 0)",
    ]


def test_a_lease_held_for_long_is_noted_at_most_once_a_minute() -> None:
    world = World([(0, jobs(1))], [Run(0, LEASE_HELD)] * 30, sigterm_at=130)
    assert world.supervise() == 0
    starts = [line for line in world.log if line.endswith("start jobs-1")]
    notes = [line for line in world.log if "lease" in line]
    assert len(starts) == 19  # every 7 s: 5 s of backoff and the tick that sees the exit
    assert notes == [
        "2 another driver holds the lease; waiting",
        "65 another driver holds the lease; waiting",
        "128 another driver holds the lease; waiting",
    ]
    assert world.log[-1] == "130 stop signal received"


def test_an_unreadable_run_log_is_reported_once_per_message_and_the_driver_keeps_running() -> None:
    script: list[tuple[float, Wanted | Exception]] = [
        (0, jobs(1)),
        (4, KafkaUnavailableError("west did not answer in 10s")),
        (10, TopoError("west: topo-runs.internal: not authorized")),
        (14, jobs(1)),
    ]
    world = World(script, [Run()], sigterm_at=20)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "4 west did not answer in 10s; retrying; the driver keeps running",
        "10 west: topo-runs.internal: not authorized; retrying; the driver keeps running",
        "14 the run state is readable again",
        "20 stop signal received",
        "20 stopping the driver",
        "20 stop",
        "20 the driver stopped (exit 0)",
    ]


def test_a_crash_while_the_run_log_is_unreadable_restarts_with_the_jobs_last_read() -> None:
    script: list[tuple[float, Wanted | Exception]] = [
        (0, jobs(1)),
        (2, KafkaUnavailableError("west did not answer in 10s")),
    ]
    world = World(script, [Run(3, 1), Run()], sigterm_at=16)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "2 west did not answer in 10s; retrying; the driver keeps running",
        "4 the driver exited with 1; restarting at once (attempt 1)",
        "4 reaped",
        "4 starting the driver (generation 1)",
        "4 start jobs-1",
        "16 stop signal received",
        "16 stopping the driver",
        "16 stop",
        "16 the driver stopped (exit 0)",
    ]


def test_an_unreadable_run_log_at_the_start_waits() -> None:
    script: list[tuple[float, Wanted | Exception]] = [
        (0, KafkaUnavailableError("west did not answer in 10s")),
        (5, jobs(1)),
    ]
    world = World(script, [Run()], sigterm_at=8)
    assert world.supervise() == 0
    assert world.log == [
        "0 west did not answer in 10s; retrying",
        "6 the run state is readable again",
        "6 starting the driver (generation 1)",
        "6 start jobs-1",
        "8 stop signal received",
        "8 stopping the driver",
        "8 stop",
        "8 the driver stopped (exit 0)",
    ]


def test_without_jobs_it_waits_with_a_line_at_most_once_a_minute() -> None:
    unusable = jobs(1, unusable="the jobs were published for another version of topology.yaml")
    world = World([(0, NONE), (100, unusable)], sigterm_at=170)
    assert world.supervise() == 0
    assert world.log == [
        "0 no jobs are published for this topology; waiting",
        "60 no jobs are published for this topology; waiting",
        "100 the jobs were published for another version of topology.yaml; waiting",
        "160 the jobs were published for another version of topology.yaml; waiting",
        "170 stop signal received",
    ]


def test_jobs_that_become_unusable_stop_the_driver_until_usable_jobs_come() -> None:
    unusable = jobs(2, unusable="the jobs were published for another version of topology.yaml")
    script: list[tuple[float, Wanted | Exception]] = [(0, jobs(1)), (4, unusable), (10, jobs(3))]
    world = World(script, [Run(), Run()], sigterm_at=12)
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 start jobs-1",
        "4 the jobs were published for another version of topology.yaml; stopping the driver",
        "4 stop",
        "4 the driver stopped (exit 0)",
        "4 the jobs were published for another version of topology.yaml; waiting",
        "10 starting the driver (generation 3)",
        "10 start jobs-3",
        "12 stop signal received",
        "12 stopping the driver",
        "12 stop",
        "12 the driver stopped (exit 0)",
    ]


def test_a_driver_that_cannot_start_is_retried_with_the_backoff() -> None:
    world = World([(0, jobs(1))], [Run()], sigterm_at=8)
    real_start = world.start
    failures = iter([TopoError("spark-submit not found on PATH")] * 2)

    def start(jobs: object) -> FakeDriver:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real_start(jobs)

    world.start = start  # type: ignore[method-assign]
    assert world.supervise() == 0
    assert world.log == [
        "0 starting the driver (generation 1)",
        "0 cannot start the driver: spark-submit not found on PATH; restarting at once (attempt 1)",
        "0 starting the driver (generation 1)",
        "0 cannot start the driver: spark-submit not found on PATH; restarting in 5s (attempt 2)",
        "5 starting the driver (generation 1)",
        "5 start jobs-1",
        "9 stop signal received",
        "9 stopping the driver",
        "9 stop",
        "9 the driver stopped (exit 0)",
    ]


def test_exit_codes_are_described_with_their_signal() -> None:
    assert describe_exit(1) == "1"
    assert describe_exit(-9) == "-9 (SIGKILL)"
    assert describe_exit(-15) == "-15 (SIGTERM)"
    assert describe_exit(-200) == "-200"
