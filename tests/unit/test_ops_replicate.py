"""The replication driver's decisions (topology.ops.replicate), over fake clocks, fake copies
and fake lease answers: no Spark, no Kafka."""

from topology.core.runstate import FlowState
from topology.ops.replicate import Action, Cadence, Do, Leader, Tick, backoff

FLOW = "east->west"
ORDERS = {"orders": "east.orders"}
BOTH = {"orders": "east.orders", "payments": "east.payments"}


def did(actions: list[Action]) -> list[tuple[Do, str | None]]:
    """What was decided, without the log lines."""
    return [(a.do, a.flow) for a in actions if a.do is not Do.REPORT]


def lines(actions: list[Action]) -> list[str]:
    return [a.line for a in actions if a.do is Do.REPORT]


def running_loop(leader: Leader, now: float = 0.0) -> None:
    [start] = leader.step(Tick(now, maps={FLOW: ORDERS}))
    assert (start.do, start.flow, start.topics) == (Do.START, FLOW, ORDERS)
    assert leader.step(Tick(now, started=frozenset({FLOW}))) == []


def test_a_flow_with_topics_starts_and_one_without_waits() -> None:
    leader = Leader([FLOW, "west->east"], once=False)
    actions = leader.step(Tick(0.0, maps={FLOW: ORDERS, "west->east": {}}))
    assert did(actions) == [(Do.START, FLOW)]
    assert leader.flows["west->east"].state is FlowState.WAITING_FOR_TOPICS
    assert leader.flows[FLOW].state is FlowState.STARTING
    leader.step(Tick(0.5, started=frozenset({FLOW})))
    assert leader.flows[FLOW].state is FlowState.RUNNING
    # the sources changed but not the topics (a partition added): the loop is given them again,
    # to take the new partition, and nothing is said or restarted
    again = leader.step(Tick(2.0, maps={FLOW: ORDERS, "west->east": {}}))
    assert did(again) == [(Do.JOIN, FLOW)] and lines(again) == []


def test_a_paused_flow_never_starts_while_the_others_do() -> None:
    leader = Leader([FLOW, "west->east"], once=False, paused=frozenset({FLOW}))
    assert leader.flows[FLOW].state is FlowState.PAUSED
    actions = leader.step(Tick(0.0, maps={FLOW: ORDERS, "west->east": ORDERS}))
    assert did(actions) == [(Do.START, "west->east")]
    later = leader.step(Tick(2.0, maps={FLOW: BOTH, "west->east": ORDERS}))
    assert FLOW not in [action.flow for action in later]
    assert leader.flows[FLOW].state is FlowState.PAUSED


def test_a_new_topic_joins_a_running_copy_loop_without_a_restart() -> None:
    leader = Leader([FLOW], once=False)
    running_loop(leader)
    actions = leader.step(Tick(2.0, maps={FLOW: BOTH}))
    assert did(actions) == [(Do.JOIN, FLOW)]
    assert actions[-1].topics == BOTH
    assert lines(actions) == [f"{FLOW}: new topic(s) payments; copying them too"]
    assert leader.flows[FLOW].state is FlowState.RUNNING and leader.flows[FLOW].restarts == 0


def test_a_running_flow_left_without_topics_stops_and_waits_then_starts_again() -> None:
    leader = Leader([FLOW], once=False)
    running_loop(leader)
    assert did(leader.step(Tick(2.0, maps={FLOW: {}}))) == [(Do.STOP, FLOW)]
    assert leader.flows[FLOW].state is FlowState.WAITING_FOR_TOPICS
    assert not leader.running()
    assert did(leader.step(Tick(4.0, maps={FLOW: BOTH}))) == [(Do.START, FLOW)]


def test_a_failed_copy_is_started_again_alone_after_a_growing_backoff() -> None:
    leader = Leader([FLOW, "west->east"], once=False)
    leader.step(Tick(0.0, maps={FLOW: ORDERS, "west->east": {"x": "west.x"}}))
    leader.step(Tick(0.1, started=frozenset({FLOW, "west->east"})))
    actions = leader.step(Tick(10.0, ended={FLOW: "Broker: transport failure"}))
    assert lines(actions) == [f"{FLOW} failed: Broker: transport failure"]
    run = leader.flows[FLOW]
    assert (run.state, run.error, run.retry_at) == (
        FlowState.RESTARTING,
        "Broker: transport failure",
        10.0 + backoff(0),
    )
    assert leader.flows["west->east"].state is FlowState.RUNNING  # the other copies on
    # new topics seen meanwhile do not start it early; they are what it restarts on (the
    # other flow's loop is given its topics again, as always when the sources change)
    meanwhile = leader.step(Tick(12.0, maps={FLOW: BOTH, "west->east": {"x": "west.x"}}))
    assert did(meanwhile) == [(Do.JOIN, "west->east")]
    assert leader.step(Tick(14.9)) == []
    restart = leader.step(Tick(15.0))
    assert did(restart) == [(Do.START, FLOW)] and restart[-1].topics == BOTH
    assert lines(restart) == [f"{FLOW}: restarting from where it stopped (attempt 1)"]
    # it could not start (a checkpoint unreadable): the next wait is twice as long
    leader.step(Tick(15.5, start_failed={FLOW: "checkpoint unreadable"}))
    assert leader.flows[FLOW].retry_at == 15.5 + 10.0
    assert leader.step(Tick(25.4)) == []
    assert did(leader.step(Tick(25.5))) == [(Do.START, FLOW)]
    leader.step(Tick(26.0, started=frozenset({FLOW})))
    assert leader.flows[FLOW].state is FlowState.RUNNING and leader.flows[FLOW].error is None


def test_the_backoff_doubles_and_is_capped() -> None:
    assert [backoff(n) for n in range(6)] == [5.0, 10.0, 20.0, 40.0, 60.0, 60.0]
    assert backoff(10_000) == 60.0


def test_a_lost_lease_halts_every_copy_at_once_and_decides_nothing_more() -> None:
    leader = Leader([FLOW], once=False)
    running_loop(leader)
    actions = leader.step(Tick(3.0, lease_lost="another driver took this topology's lease"))
    assert did(actions) == [(Do.HALT_ALL, None)]
    assert "so that no two drivers write" in lines(actions)[0]
    assert leader.run_state() is FlowState.STOPPING
    # whatever happens next (a copy ending, new topics), nothing starts again
    assert leader.step(Tick(4.0, ended={FLOW: "fenced"}, maps={FLOW: BOTH})) == []
    assert leader.step(Tick(100.0)) == []


def test_a_stop_request_stops_every_copy_cleanly() -> None:
    leader = Leader([FLOW], once=False)
    running_loop(leader)
    assert did(leader.step(Tick(3.0, stop_asked=True))) == [(Do.STOP_ALL, None)]
    assert leader.finish() is FlowState.STOPPED
    assert leader.flows[FLOW].state is FlowState.STOPPED and leader.exit_code() == 0


def test_once_a_flow_is_done_when_its_copy_ends_and_a_failure_fails_the_run() -> None:
    leader = Leader([FLOW, "west->east"], once=True)
    leader.step(Tick(0.0, maps={FLOW: ORDERS, "west->east": {}}))
    assert leader.flows["west->east"].state is FlowState.DONE  # nothing to copy
    assert leader.running()  # being started: --once waits for it
    leader.step(Tick(0.1, started=frozenset({FLOW})))
    assert leader.running()
    leader.step(Tick(5.0, ended={FLOW: None}))
    assert not leader.running() and leader.flows[FLOW].state is FlowState.DONE
    assert leader.finish() is FlowState.DONE and leader.exit_code() == 0

    failing = Leader([FLOW], once=True)
    failing.step(Tick(0.0, maps={FLOW: ORDERS}))
    failing.step(Tick(0.1, started=frozenset({FLOW})))
    failing.step(Tick(5.0, ended={FLOW: "Broker: transport failure"}))
    assert failing.flows[FLOW].state is FlowState.FAILED and not failing.running()
    assert failing.step(Tick(100.0)) == []  # --once does not retry
    assert failing.finish() is FlowState.FAILED and failing.exit_code() == 1


def test_the_drivers_chores_come_due_on_their_own_beats() -> None:
    cadence = Cadence(
        {"beat": 1.0, "follow": 10.0, "offsets": 10.0},
        100.0,
        first={"follow": 10.0, "offsets": 5.0},
    )
    assert cadence.due(100.0) == {"beat"}  # at once, unless a first turn is given
    assert cadence.due(100.5) == set()
    assert cadence.due(101.0) == {"beat"}
    assert cadence.due(105.2) == {"beat", "offsets"}
    # a late look runs a chore once, not once per turn missed, and counts from then
    assert cadence.due(130.0) == {"beat", "follow", "offsets"}
    assert cadence.due(131.0) == {"beat"}
    assert cadence.due(140.0) == {"beat", "follow", "offsets"}
    # the loop sleeps until the next chore is due: here the beat, a second on
    assert cadence.next_turn() == 141.0
    assert Cadence({}, 0.0).next_turn() == float("inf")


def test_a_chore_that_finds_nothing_backs_off_and_a_change_brings_it_back() -> None:
    cadence = Cadence({"follow": 10.0}, 0.0, first={"follow": 10.0}, longest={"follow": 60.0})
    assert cadence.due(10.0) == {"follow"}
    cadence.settle("follow", False, 10.0)  # nothing changed: 20 s
    assert cadence.due(29.0) == set() and cadence.due(30.0) == {"follow"}
    cadence.settle("follow", False, 30.0)  # 40 s
    assert cadence.due(69.0) == set() and cadence.due(70.0) == {"follow"}
    cadence.settle("follow", False, 70.0)  # 60 s, the longest
    assert cadence.due(130.0) == {"follow"}
    cadence.settle("follow", False, 130.0)  # still 60 s
    assert cadence.due(189.0) == set()
    # a look that did not run changes nothing; a change made meanwhile (a new topic's copy)
    # brings it back to its beat from then
    cadence.settle("follow", False, 140.0, ran=False)
    assert cadence.due(189.0) == set() and cadence.due(190.0) == {"follow"}
    cadence.settle("follow", False, 190.0)
    cadence.settle("follow", True, 200.0, ran=False)
    assert cadence.due(209.0) == set() and cadence.due(210.0) == {"follow"}
    cadence.settle("follow", True, 210.0)
    assert cadence.due(220.0) == {"follow"}


def test_a_chore_without_a_longest_wait_keeps_its_beat() -> None:
    cadence = Cadence({"beat": 1.0}, 0.0)
    assert cadence.due(0.0) == {"beat"}
    cadence.settle("beat", False, 0.0)
    assert cadence.due(1.0) == {"beat"}
