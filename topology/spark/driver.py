"""topo's replication driver: the one program every runner submits (`spark-submit driver.py`).

A thin adapter: it looks and acts, and every decision about the copies is the leader's
(`ops/replicate.py`). It runs the jobs document it is given (the one `topo apply` published:
the specs, the engine, the clusters' connections with secrets as references, the topology they
were made from; one of another format, or whose digest does not match, is refused) and never
reads the topology file: one copy loop per spec (`spark/loop.py`, its copy slots Spark tasks on
the executors). First it takes the topology's lease
in `topo-runs.internal` on the home cluster (`spark/lease_keeper.py`), so exactly one driver
writes: a second one exits with LEASE_HELD (`topo run` waits and tries again). In continuous
mode it then:
- follows the sources through the reconcile `topo apply` runs (`spark/following.py`): at once
  when a source's topics or partition counts change or a flow's copy on its target does
  (looked at every 2 s), and every 10 s for configs and ACLs, backing off while that changes
  nothing; a new topic or partition joins the flow's running copy loop (nothing restarts), so
  a topic created after apply is copied in seconds;
- every second writes heartbeats and its status (`spark/driver_status.py`), which the lease
  thread publishes with each renewal; a stop request (`topo stop`, from any machine) is obeyed;
- starts a flow taking over from MM2 where MM2 stopped (`spark/starts.py`), restarts a copy
  that failed after a backoff, translates group offsets beside the copies
  (`spark/offset_rounds.py`);
- serves its metrics, health, readiness and history over HTTP (`spark/watched.py`,
  docs/metrics.md), in either mode unless `engine.metrics` is false;
- stops every copy cleanly on SIGTERM or a stop request, releases the lease and exits 0.
With `--mode once` each copy copies what its source holds at start and the driver exits when
all are done: 0 when every one succeeded.
"""

import argparse
import contextlib
import dataclasses
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from topology.core import client_roles, copy_slots, intervals
from topology.core.connection import client_config, java_client_config
from topology.core.errors import TopoError
from topology.core.flow_status import FlowStatus, first_line
from topology.core.jobs import JobsDocument, JobsFormatError, read_document
from topology.core.lag_look import Reported
from topology.core.model import Objectives, Topology
from topology.core.runstate import FlowState
from topology.host import jobstate, key_stores
from topology.kafka.heartbeats import Emitter
from topology.ops.replicate import Action, Cadence, Do, Leader, Tick
from topology.ops.supervise import JOBS_REFUSED, LEASE_HELD
from topology.spark import cluster_looks, cores, loop
from topology.spark.driver_status import DriverStatus
from topology.spark.following import Following
from topology.spark.lease_keeper import LeaseKeeper
from topology.spark.offset_rounds import OffsetRounds
from topology.spark.starts import Handovers, checkpoint_location
from topology.spark.watched import Watched
from topology.telemetry import logline

# Heartbeats, the topics look, configs and ACLs followed, checkpoints and group offsets: every
# `engine.intervals` (MM2's names; `core.intervals` has topo's defaults).
STATUS_EVERY = 1.0
NAP_LONGEST = 1.0  # the most the continuous driver sleeps between two turns of its loop
LOOK_EVERY = 1.0  # the copies asked what they did and whether they ended (calls into the JVM)


class Replicator:
    def __init__(
        self,
        spark: SparkSession,
        topology: Topology,
        jobs: JobsDocument,
        folder: Path,
        once: bool,
        report: Any,
        configs: dict[str, dict[str, str]],
    ) -> None:
        self.spark = spark
        self.topology = topology
        self.folder = folder
        self.once = once
        self.report = report
        self.configs = configs
        self.java = {name: java_client_config(c) for name, c in self.configs.items()}
        self.specs = {spec.flow: spec for spec in jobs.specs}
        self.lock = threading.Lock()  # copies started here, stopped by the lease thread too
        self.snapshot: dict[str, Any] | None = None  # the newest status, for the lease thread
        self.flows = {flow: FlowStatus(spec) for flow, spec in self.specs.items()}
        self.maps: dict[str, dict[str, str]] = {}
        self.copies: dict[str, loop.RunningLoop] = {}
        self.seen_maps: dict[str, dict[str, str]] = {}  # each flow's topic map, as last seen
        self.slots: dict[str, int] = {}  # each flow's copy slots, sized as the first one starts
        # Rounds run beside the loop: a cluster that does not answer must not hold heartbeats.
        self.offsets_thread: threading.Thread | None = None
        self.wake = threading.Event()  # set to end the loop's nap early: a stop, a copy started
        self.stopping = False
        self.topics: dict[str, list[str]] = {}  # flow -> the source topics its copy follows
        paused = frozenset(flow for flow, spec in self.specs.items() if spec.paused)
        self.leader = Leader(list(self.specs), once, paused)  # every decision about the copies
        self.started: set[str] = set()  # since the last tick: the flows whose copy started
        self.start_failed: dict[str, str] = {}  # since the last tick: flow -> why not
        info = {
            "mode": "once" if once else "continuous",
            "runner": topology.engine.runner,
            "host": socket.gethostname(),
        }
        objectives = {  # a paused flow's lag grows by design: nothing is judged
            flow: Objectives() if spec.paused else topology.edge(flow).settings.objectives
            for flow, spec in self.specs.items()
        }
        self.watched = Watched(
            topology.name,
            info,
            self.specs,
            configs,
            folder,
            report,
            self.read_positions,
            self.reported_ends,
            objectives,
            lambda: dict(self.maps),
            looker=lambda name: cluster_looks.admin_opened(
                spark, configs[name], f"topo-{topology.name}-looks-{name}"
            ),
        )
        self.figures = self.watched.figures
        self.rounds = OffsetRounds(topology, configs, set(self.specs), once, self.figures, report)
        self.following = Following(
            topology,
            jobs,
            configs,
            self.figures,
            report,
            lambda name: (
                cluster_looks.shapes_opened(
                    spark, configs[name], f"topo-{topology.name}-topics-{name}"
                ).shapes
            ),
        )
        self.handovers = Handovers(jobs.starts, report)
        self.status = DriverStatus(topology, jobs, once, self.figures)

    def read_positions(self) -> dict[str, dict[tuple[str, int], int]]:
        """Per flow, how far its running copy has read each source partition (its committed
        positions): what the metrics' lag is measured from (on their thread)."""
        found = {}
        for flow, status in self.flows.items():
            reading = set(self.topics.get(flow, ()))
            done = dict(status.processed)  # one copy: the loop's thread updates it
            found[flow] = {key: offset for key, offset in done.items() if key[0] in reading}
        return found

    def reported_ends(self) -> dict[str, Reported]:
        """Per flow, the source's ends its copy's newest report gave (on the metrics' thread)."""
        return {flow: dict(status.reported) for flow, status in self.flows.items()}

    # -- copies ---------------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        """A stop was asked for (a signal, `topo stop`, the lease lost): the loop wakes for it."""
        return self._stopping

    @stopping.setter
    def stopping(self, value: bool) -> None:
        self._stopping = value
        if value:
            self.wake.set()

    def start_copy(self, flow: str, topic_map: Mapping[str, str]) -> None:
        """Start the flow's copy on `topic_map`; what came of it is told to the leader at the
        next tick (started, or why it could not)."""
        spec = self.specs[flow]
        self.maps[flow] = dict(topic_map)
        self.flows[flow].topics = len(topic_map)
        checkpoint = checkpoint_location(self.topology, self.folder, spec.slug)
        counts = self.following.counts(flow, topic_map)
        roles = self.roles(flow)
        planned = loop.LoopPlan(
            spec=spec,
            topic_map=dict(topic_map),
            source_options=self.java[spec.source],
            target_options=self.java[spec.target],
            starting=self.handovers.starting(flow, checkpoint, counts),
            once=self.once,
            slots=self.slot_count(flow),
            owner=self.topology.name,
            partitions=counts,
            consumer=roles["consumer"],
            producer=roles["producer"],
            admin=roles["admin"],
        )
        if planned.starting is None:  # a flow that copied as micro-batches goes on from there
            try:
                ended = loop.checkpoint_offsets(self.spark, checkpoint)
            except Exception as problem:  # storage unreachable: this flow waits, not the others
                self.start_failed[flow] = first_line(
                    f"reading its checkpoint {checkpoint}: {problem}"
                )
                return
            planned = dataclasses.replace(planned, starting=ended)
        else:  # once: the loop commits the handover's positions as it starts
            planned = dataclasses.replace(planned, starting_wins=self.handovers.begins(flow))
        if self.stopping:
            return  # fenced or stopping: no copy starts now
        try:
            started = loop.start(self.spark, planned)
        except TopoError as problem:
            self.start_failed[flow] = first_line(str(problem))
            return
        with self.lock:
            if self.stopping:  # fenced while it started: it must not write
                started.stop()
                return
            self.copies[flow] = started
        self.topics[flow] = sorted(topic_map)
        self.started.add(flow)
        fencing = started.fencing()
        if fencing is not None:
            self.report(f"{flow}: {fencing[0]}", level=fencing[1])

    def roles(self, flow: str) -> dict[str, dict[str, str]]:
        """The flow's clients by role (`core.client_roles.of_edge`)."""
        spec = self.specs[flow]
        return client_roles.of_edge(
            self.topology.clusters[spec.source],
            self.topology.clusters[spec.target],
            self.topology.edge(flow).settings,
        )

    def slot_count(self, flow: str) -> int:
        """The flow's copy slots (`core.copy_slots`): every flow's is sized from the partitions
        seen and the cores Spark offers as the first copy starts, then kept while this driver
        runs (a copy started again keeps its count)."""
        if not self.slots:  # every flow is sized at once
            seen = {name: self.following.counts(name, m) for name, m in self.seen_maps.items()}
            wanted = {
                name: copy_slots.Wanted(spec.tasks, sum(seen.get(name, {}).values()))
                for name, spec in self.specs.items()
                if not spec.paused  # a paused flow has no slots: it starts none
            }
            offered = cores.offered(self.spark, self.topology.engine)
            self.slots = copy_slots.sized(wanted, offered)
            for name, count in self.slots.items():
                self.report(f"{name}: {copy_slots.said(wanted[name], count, offered)}")
        return self.slots[flow]

    def stop_copy(self, flow: str) -> None:
        running = self.copies.get(flow)
        if running is not None and running.isActive:
            running.stop()
        self.collect(flow)  # its last report, before it is forgotten
        self.copies.pop(flow, None)

    def collect(self, flow: str) -> None:
        """What the flow's copy did since the last look (`progress.FlowProgress`), to its
        status and its metrics."""
        running = self.copies.get(flow)
        if running is None:
            return
        status = self.flows[flow]
        made = running.reports()
        # A move starts only while slots copy, so its news comes with their reports (a fence
        # 30 s later waits for the next one): an idle flow makes no second call.
        for said in running.news() if made else ():
            self.report(f"{flow}: {said}")
        for progress in made:
            status.add(progress, time.time(), time.monotonic())
            self.figures.progress(flow, progress)
            for loss in self.figures.lost(flow, progress.losses, time.time()):
                self.report(f"{flow}: LOST: {loss.describe()} (on_loss: {status.spec.on_loss})")

    def ended(self) -> dict[str, str | None]:
        """The copies that ended since the last look, each with its error (None: it finished,
        as `--once` copies do); their last reports counted first."""
        found: dict[str, str | None] = {}
        for flow in list(self.copies):
            running = self.copies[flow]
            self.collect(flow)
            if running.isActive:
                continue
            self.collect(flow)  # what it reported between that look and its end
            problem = running.exception()
            with self.lock:
                self.copies.pop(flow, None)
            found[flow] = None if problem is None else first_line(str(problem))
        return found

    def step(self, maps: Mapping[str, Mapping[str, str]] | None = None, look: bool = True) -> None:
        """One tick: what was seen goes to the leader (`ops.replicate`), its actions are taken.
        `look`: the copies are asked what they did and whether they ended (else not, this tick)."""
        if maps is not None:
            self.seen_maps.update({flow: dict(m) for flow, m in maps.items()})
        tick = Tick(
            time.monotonic(),
            maps=maps,
            ended=self.ended() if look else {},
            start_failed=dict(self.start_failed),
            started=frozenset(self.started),
            stop_asked=self.stopping,
        )
        self.start_failed.clear()
        self.started.clear()
        with self.lock:
            actions = self.leader.step(tick)
        self.act(actions)

    def act(self, actions: list[Action]) -> None:
        """Take the leader's actions (its lines, starts, joins and stops)."""
        for action in actions:
            flow = action.flow
            if action.do is Do.REPORT:
                self.report(action.line, event=action.event, level=action.level)
                if action.event == "query.failed" and flow is not None:
                    self.figures.error(flow, "query")
                elif action.event == "query.restart" and flow is not None:
                    self.figures.restart(flow, "retry", time.time())
            elif action.do is Do.HALT_ALL:
                self.halt_all()
            elif action.do is Do.STOP_ALL:
                for running in list(self.copies):
                    self.stop_copy(running)
            elif flow is None:
                continue
            elif action.do is Do.STOP:
                self.stop_copy(flow)
            elif action.do is Do.START and action.topics is not None:
                self.start_copy(flow, action.topics)
            elif action.do is Do.JOIN and action.topics is not None:
                self.join(flow, action.topics)

    def halt_all(self) -> None:
        """Stop every copy now, committing nothing: each halted at once, then all stopped."""
        with self.lock:
            self.stopping = True
            running = list(self.copies.values())
        for copy in running:
            with contextlib.suppress(Exception):
                copy.halt()
        for copy in running:
            with contextlib.suppress(Exception):  # stopped already, or Spark is going down
                copy.stop()

    def lease_lost(self, why: str) -> None:
        """From the lease's threads: the leader decides (halt every copy), taken at once."""
        with self.lock:
            actions = self.leader.step(Tick(time.monotonic(), lease_lost=why))
        self.act(actions)

    def discovered(self, flow: str, topic_map: Mapping[str, str]) -> None:
        before = self.maps.get(flow)
        added = set(topic_map) - set(before or {})
        if added and before is not None:
            self.figures.discovered(flow, len(added))

    # -- the loops ------------------------------------------------------------------------------

    def run_once(self) -> int:
        self.step(self.following.sync())
        last_line = 0.0
        while self.leader.running() and not self.stopping:
            now = time.monotonic()
            self.step()
            self.write_status(self.leader.run_state())
            if now - last_line >= 5:
                last_line = now
                for status in self.flows.values():
                    lag = "" if status.lag is None else f", {status.lag} behind"
                    self.report(
                        f"{status.spec.flow}: {status.records} records{lag}", event="progress"
                    )
            time.sleep(0.5)
        for flow in list(self.copies):
            self.stop_copy(flow)
        final = self.leader.finish()
        if final is FlowState.DONE:
            self.report("copied; translating consumer group offsets")
            self.rounds.record(self.flows)
            self.rounds.offsets()
        self.write_status(final)
        for status in self.flows.values():
            self.report(
                f"{status.spec.flow}: {status.state}, {status.records} records "
                f"({status.bytes} bytes) from {status.topics} topic(s)"
            )
        return self.leader.exit_code()

    def run_continuously(self) -> int:
        emitter = Emitter(self.configs)
        start = time.monotonic()
        every = intervals.of(self.topology.engine.intervals)
        cadence = Cadence(
            {"beat": every.beat, "watch": every.watch, "status": STATUS_EVERY}
            | {"look": LOOK_EVERY}
            | {"offsets": every.offsets, "follow": every.follow},
            start,
            first={"offsets": min(5.0, every.offsets), "follow": every.follow},
            longest={"follow": every.follow_longest, "offsets": every.offsets_longest},
        )
        while not self.stopping:
            due = cadence.due(time.monotonic())
            made = self.following.made
            if "follow" in due:
                self.following.forget_shapes()  # reconcile now, even if no topic changed
                due |= {"watch"}
            if "beat" in due:
                for spec in self.specs.values():
                    if spec.heartbeats and not spec.paused:  # none say a paused flow is up
                        emitter.beat(spec.target, spec.source, spec.target)
                        emitter.beat(spec.source, spec.source, spec.target)
            # The copies are looked at once a second, each look a few calls into the JVM per
            # flow; between chores the loop sleeps (a stop request wakes it).
            self.step(self.watch() if "watch" in due else None, look="look" in due)
            # a quiet source is looked at less and less often
            changed = self.following.made > made
            cadence.settle("follow", changed, time.monotonic(), ran="follow" in due)
            if "status" in due:
                self.write_status(self.leader.run_state())
                if self.rounds.record(self.flows):  # copied: the rounds back at their beat
                    cadence.settle("offsets", True, time.monotonic(), ran=False)
            # rounds that find nothing new come less and less often
            outcome = self.rounds.take_outcome()
            if outcome is not None:
                cadence.settle("offsets", outcome, time.monotonic())
            if "offsets" in due and not (self.offsets_thread and self.offsets_thread.is_alive()):
                self.offsets_thread = threading.Thread(
                    target=self.rounds.offsets, name="topo-offsets", daemon=True
                )
                self.offsets_thread.start()
            if self.started or self.start_failed:
                continue  # the leader hears of it at once
            # Asleep until the next chore is due (at most NAP_LONGEST), or a stop wakes it.
            self.wake.wait(min(NAP_LONGEST, max(0.0, cadence.next_turn() - time.monotonic())))
            self.wake.clear()
        self.step()  # the stop, as the leader decides it
        self.write_status(FlowState.STOPPING)
        for flow in list(self.copies):
            self.stop_copy(flow)
        self.rounds.record(self.flows)
        emitter.flush()
        self.write_status(self.leader.finish())
        return self.leader.exit_code()

    def watch(self) -> dict[str, dict[str, str]] | None:
        """Each flow's topic map when the sources' topics or partition counts changed; None
        when they did not, or could not be read (the flows not copying then say why)."""
        maps, problem = self.following.watch()
        if problem is not None:
            for status in self.flows.values():
                if status.spec.flow not in self.copies:
                    status.error = first_line(problem)
        return maps

    def join(self, flow: str, topic_map: Mapping[str, str]) -> None:
        """Topics and partitions found while a copy loop runs join it: nothing restarts."""
        running = self.copies.get(flow)
        if running is None:
            return
        self.discovered(flow, topic_map)
        self.maps[flow] = dict(topic_map)
        running.update(topic_map, self.following.counts(flow, topic_map))
        self.topics[flow] = sorted(topic_map)
        self.flows[flow].topics = len(topic_map)

    def write_status(self, state: str) -> None:
        """The newest status, for the lease thread to publish (`spark/driver_status.py`)."""
        self.status.judge(self.flows, self.leader, self.topics)
        self.snapshot = self.status.document(
            state, self.flows.values(), self.following.applied, self.watched.url
        )


def _jobs(file: str) -> JobsDocument:
    """The jobs document `topo run` wrote: this format, its digest matching its content."""
    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as problem:
        raise JobsFormatError(f"cannot read the jobs document {file}: {problem}") from None
    return read_document(data)


def _record_pid(folder: Path) -> None:
    """Add this program's pid to driver.json, which the launcher wrote: `topo stop` signals it."""
    recorded = jobstate.read_json(folder / jobstate.DRIVER)
    if isinstance(recorded, dict):
        jobstate.write_json(folder / jobstate.DRIVER, {**recorded, "driver_pid": os.getpid()})


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="topo-driver")
    parser.add_argument("--state", required=True)
    parser.add_argument("--jobs", required=True, help="the jobs document to run")
    parser.add_argument("--base", required=True, help="where relative ${file:...} are read")
    parser.add_argument("--mode", choices=("once", "continuous"), required=True)
    args = parser.parse_args(argv)
    folder = Path(args.state)
    stop_early: list[bool] = []
    run_state: LeaseKeeper | None = None

    log_format = os.environ.get(logline.ENVIRONMENT, "text")
    flows: list[str] = []  # known once the jobs are read: a line about one names its flow

    def report(line: str, *, event: str = "driver", level: str = "info") -> None:
        text = logline.line(line, log_format, time.time(), event=event, level=level, flows=flows)
        print(text, flush=True)

    def on_term(_signum: int, _frame: object) -> None:
        stop_early.append(True)
        if run_state is not None:
            run_state.stopping()

    # First of all: a stop asked for while the driver starts still releases the lease, and
    # `topo stop` on this machine can signal this program from the start.
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    _record_pid(folder)
    try:
        jobs = _jobs(args.jobs)
        base = Path(args.base)
        topology = jobs.topology(str(base / "(jobs document)"))
        flows.extend(spec.flow for spec in jobs.specs)
        configs = {
            name: client_config(cluster, os.environ, base=base, read_store=key_stores.read)
            for name, cluster in topology.clusters.items()
        }
        run_state = LeaseKeeper(topology, configs, report)
        if stop_early:
            run_state.stopping()
        if not run_state.acquire():
            return LEASE_HELD
    except JobsFormatError as problem:
        report(f"error: {problem}", event="error", level="error")
        return JOBS_REFUSED
    except (OSError, TopoError) as problem:
        report(f"error: {problem}", event="error", level="error")
        return 1
    spark: SparkSession | None = None
    code, final = 1, "failed"
    try:
        spark = SparkSession.builder.getOrCreate()
        once = args.mode == "once"
        replicator = Replicator(spark, topology, jobs, folder, once, report, configs)
        replicator.watched.start(topology.engine.metrics)
        run_state.attach(replicator)
        code = replicator.run_once() if replicator.once else replicator.run_continuously()
        final = "done" if once and code == 0 else ("failed" if code else "stopped")
    except TopoError as problem:
        report(f"error: {problem}", event="error", level="error")
    except Exception as problem:  # Spark's own (a bad checkpoint URI, say): said, not hidden
        report(
            f"error: {type(problem).__name__}: {first_line(str(problem))}",
            event="error",
            level="error",
        )
    finally:
        run_state.finish(final)
        if final == "failed" and run_state.replicator is not None:
            with contextlib.suppress(Exception):
                run_state.replicator.write_status("failed")
        if run_state.replicator is not None:
            with contextlib.suppress(Exception):  # Spark is stopped whatever happens here
                run_state.replicator.watched.stop()
        if spark is not None:
            spark.stop()
    # Over: a SIGTERM now (the supervisor's stop, crossing this exit) must not become the exit
    # code, as it would once Python puts the default actions back on its way out.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if run_state.fenced:
        return LEASE_HELD
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
