"""topo's replication driver: the one program every runner submits (`spark-submit driver.py`).

It runs one Spark query per edge of the topology and, in continuous mode, supervises them:
- every 2 s it looks at each source's topics (names and partition counts); when they change it
  plans the topics again and creates what is missing on the targets (remote topics with their
  partitions and configs, grown partitions, ACLs: never a delete), then restarts the queries
  whose topic list changed. So a topic created after apply is copied within seconds;
- every second it writes heartbeats and `status.json` (records, bytes, lag, rates per flow);
- a query that fails (a cluster down, say) is restarted from its checkpoint after a backoff;
- SIGTERM stops every query cleanly and exits.
With `--mode once` each query copies what its source holds at start (availableNow) and the
driver exits when all are done: 0 when every one succeeded.
"""

import argparse
import hashlib
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from topology import jobstate
from topology.analysis import analyse
from topology.connection import client_config, java_client_config
from topology.errors import TopoError
from topology.jobprogress import FlowStatus, first_line, lag, processed, progress_metrics
from topology.jobs import specs_of
from topology.kafka import changes, inventory
from topology.kafka.heartbeats import Emitter
from topology.kafka.offsets import LogWriter
from topology.kafka.topic_watch import TopicWatch
from topology.model import Topology
from topology.offsets import checkpoints
from topology.offsets.rounds import Checkpointer
from topology.plan.planner import offset_syncs_topic, plan, replicated_topics
from topology.spark import query

HEARTBEAT_EVERY = 1.0
WATCH_EVERY = 2.0
STATUS_EVERY = 1.0
OFFSETS_EVERY = 10.0  # checkpoints and group offset sync (MM2's default is 60 s)
PROGRESS_FLUSH = 2.0  # seconds the loop waits for its progress records; retried next second


class Replicator:
    def __init__(
        self, spark: SparkSession, topology: Topology, folder: Path, once: bool, report: Any
    ) -> None:
        self.spark = spark
        self.topology = topology
        self.folder = folder
        self.once = once
        self.report = report
        base = Path(topology.file).parent
        self.configs = {
            name: client_config(cluster, os.environ, base=base)
            for name, cluster in topology.clusters.items()
        }
        self.java = {name: java_client_config(c) for name, c in self.configs.items()}
        self.specs = {spec.flow: spec for spec in specs_of(topology)}
        self.flows = {flow: FlowStatus(spec) for flow, spec in self.specs.items()}
        self.maps: dict[str, dict[str, str]] = {}
        self.queries: dict[str, StreamingQuery] = {}
        self.recorded: dict[str, dict[tuple[str, int], int]] = {}  # progress written, per flow
        self.checkpointer = Checkpointer(topology, self.configs)
        self.writers: dict[str, LogWriter] = {}  # progress logs, by target cluster
        # Rounds run beside the loop: a cluster that does not answer must not hold heartbeats.
        self.offsets_thread: threading.Thread | None = None
        self.stopping = False
        self.started_at = time.time()

    # -- topics ---------------------------------------------------------------------------------

    def sync_topics(self) -> dict[str, dict[str, str]]:
        """Create what the targets lack for the topics the sources have now; each flow's topic
        map (source -> remote) of the topics whose remote exists."""
        clusters = inventory.observe_all(self.configs)
        running = {flow: spec.to_dict() for flow, spec in self.specs.items()}
        wanted = plan(self.topology, clusters, topology_sha256="0" * 64, running=running)
        failed: set[tuple[str, str]] = set()
        for change in wanted.changes:
            if not change.unattended:
                continue
            try:
                changes.execute(self.configs[change.cluster], change, owner=self.topology.name)
                self.report(f"{change.action} {change.resource} {change.name} on {change.cluster}")
            except TopoError as problem:
                failed.add((change.cluster, change.name))
                self.report(f"could not {change.action} {change.resource} {change.name}: {problem}")
        maps = replicated_topics(self.topology, clusters)
        return {
            flow: {
                source: remote
                for source, remote in topic_map.items()
                if (self.specs[flow].target, remote) not in failed
            }
            for flow, topic_map in maps.items()
        }

    # -- queries --------------------------------------------------------------------------------

    def start_query(self, flow: str) -> None:
        spec = self.specs[flow]
        status = self.flows[flow]
        topic_map = self.maps.get(flow, {})
        status.topics = len(topic_map)
        if not topic_map:
            status.state = "waiting for topics" if not self.once else "done"
            return
        planned = query.QueryPlan(
            spec=spec,
            topic_map=topic_map,
            source_options=self.java[spec.source],
            target_options=self.java[spec.target],
            checkpoint=str(self.folder / jobstate.CHECKPOINTS / spec.slug),
            once=self.once,
            target_client=self.configs[spec.target],
            owner=self.topology.name,
            trigger=self.topology.engine.trigger,
        )
        self.queries[flow] = query.start(self.spark, planned)
        status.state = "running"
        status.error = None

    def stop_query(self, flow: str) -> None:
        running = self.queries.pop(flow, None)
        if running is not None and running.isActive:
            running.stop()

    def collect(self, flow: str) -> None:
        """Count the batches the query finished since the last look."""
        running = self.queries.get(flow)
        if running is None:
            return
        status = self.flows[flow]
        for progress in running.recentProgress:
            run_id, batch = str(progress.get("runId")), int(progress.get("batchId", -1))
            if batch <= status.seen.get(run_id, -1):
                continue
            status.seen[run_id] = batch
            metrics = progress_metrics(progress, query.METRICS)
            rows = int(metrics.get("records") or progress.get("numInputRows") or 0)
            size = int(metrics.get("bytes") or 0)
            status.records += rows
            status.bytes += size
            status.lag = lag(progress)
            status.processed.update(processed(progress))
            if rows:
                status.last_batch_at = time.time()
                status.window.append((time.monotonic(), rows, size))

    def check(self, flow: str, now: float) -> None:
        """A query that stopped on an error is restarted from its checkpoint after a backoff."""
        status = self.flows[flow]
        running = self.queries.get(flow)
        if running is not None and not running.isActive:
            self.collect(flow)
            problem = running.exception()
            del self.queries[flow]
            if problem is None:
                status.state = "done"
                return
            status.error = first_line(str(problem))
            status.state = "failed" if self.once else "restarting"
            status.retry_at = now + min(60.0, 5.0 * 2**status.restarts)
            self.report(f"{flow} failed: {status.error}")
        elif running is None and status.state == "restarting" and now >= status.retry_at:
            status.restarts += 1
            self.report(f"{flow}: restarting from its checkpoint (attempt {status.restarts})")
            self.start_query(flow)

    # -- the loops ------------------------------------------------------------------------------

    def run_once(self) -> int:
        self.maps = self.sync_topics()
        for flow in self.specs:
            self.start_query(flow)
        last_line = 0.0
        while self.queries and not self.stopping:
            now = time.monotonic()
            for flow in list(self.queries):
                self.collect(flow)
                self.check(flow, now)
            self.write_status("running")
            if now - last_line >= 5:
                last_line = now
                for status in self.flows.values():
                    lag = "" if status.lag is None else f", {status.lag} behind"
                    self.report(f"{status.spec.flow}: {status.records} records{lag}")
            time.sleep(0.5)
        for flow in list(self.queries):
            self.stop_query(flow)
        failed = [s for s in self.flows.values() if s.state == "failed"]
        if not failed and not self.stopping:
            self.report("copied; translating consumer group offsets")
            self.record_progress()
            self.offsets_round()
        self.write_status("failed" if failed else "done")
        for status in self.flows.values():
            self.report(
                f"{status.spec.flow}: {status.state}, {status.records} records "
                f"({status.bytes} bytes) from {status.topics} topic(s)"
            )
        return 1 if failed or self.stopping else 0

    def run_continuously(self) -> int:
        sources = {spec.source for spec in self.specs.values()}
        watches = {name: TopicWatch(self.configs[name]) for name in sources}
        emitter = Emitter(self.configs)
        shapes: dict[str, dict[str, int]] = {}
        due = {"beat": 0.0, "watch": 0.0, "status": 0.0, "offsets": time.monotonic() + 5}
        while not self.stopping:
            now = time.monotonic()
            if now >= due["beat"]:
                due["beat"] = now + HEARTBEAT_EVERY
                for spec in self.specs.values():
                    if spec.heartbeats:
                        emitter.beat(spec.target, spec.source, spec.target)
                        emitter.beat(spec.source, spec.source, spec.target)
            if now >= due["watch"]:
                due["watch"] = now + WATCH_EVERY
                shapes = self.watch(watches, shapes)
            for flow in self.specs:
                self.collect(flow)
                self.check(flow, now)
            if now >= due["status"]:
                due["status"] = now + STATUS_EVERY
                self.write_status("running")
                self.record_progress()
            if now >= due["offsets"]:
                due["offsets"] = time.monotonic() + OFFSETS_EVERY
                if self.offsets_thread is None or not self.offsets_thread.is_alive():
                    self.offsets_thread = threading.Thread(
                        target=self.offsets_round, name="topo-offsets", daemon=True
                    )
                    self.offsets_thread.start()
            time.sleep(0.2)
        self.write_status("stopping")
        for flow in list(self.queries):
            self.collect(flow)
            self.stop_query(flow)
        self.record_progress()
        emitter.flush()
        for status in self.flows.values():
            status.state = "stopped"
        self.write_status("stopped")
        return 0

    def watch(
        self, watches: Mapping[str, TopicWatch], before: dict[str, dict[str, int]]
    ) -> dict[str, dict[str, int]]:
        """Re-plan the topics when a source's topics or partition counts changed."""
        try:
            now = {name: watch.shapes() for name, watch in watches.items()}
            if now == before:
                return before
            maps = self.sync_topics()
        except TopoError as problem:
            for status in self.flows.values():
                if status.spec.flow not in self.queries:
                    status.error = first_line(str(problem))
            return before
        for flow in self.specs:
            if maps.get(flow) != self.maps.get(flow):
                added = sorted(set(maps.get(flow, {})) - set(self.maps.get(flow, {})))
                if added and flow in self.queries:
                    self.report(f"{flow}: new topic(s) {', '.join(added)}; restarting the query")
                self.stop_query(flow)
                self.maps[flow] = maps.get(flow, {})
                self.start_query(flow)
        return now

    # -- offsets --------------------------------------------------------------------------------

    def record_progress(self) -> None:
        """Write how far each flow has processed its source partitions to its progress log on
        the target (`topo-offset-syncs.<source>.internal`), where they changed since last time."""
        for flow, status in self.flows.items():
            before = self.recorded.setdefault(flow, {})
            changed = {k: v for k, v in status.processed.items() if before.get(k) != v}
            if not changed:
                continue
            spec = status.spec
            now = int(time.time() * 1000)
            entries = [
                checkpoints.encode_progress(
                    checkpoints.Progress(flow, topic, partition, offset, now)
                )
                for (topic, partition), offset in sorted(changed.items())
            ]
            if spec.target not in self.writers:
                self.writers[spec.target] = LogWriter(self.configs[spec.target])
            writer = self.writers[spec.target]
            try:
                writer.write(offset_syncs_topic(spec.source, spec.separator), entries)
                writer.flush(timeout=PROGRESS_FLUSH)
            except TopoError as problem:
                self.report(f"{flow}: could not record its progress: {problem}")
                continue
            before.update(changed)

    def offsets_round(self) -> None:
        """Checkpoints and group offset sync for every flow (topology/offsets/rounds.py)."""
        try:
            clusters = inventory.observe_all(self.configs)
            done = self.checkpointer.run(clusters, self.report)
        except Exception as problem:  # the copy goes on; the next round tries again
            self.report(f"offsets: {first_line(str(problem)) or type(problem).__name__}")
            return
        if self.once or done.checkpoints or done.committed or done.active:
            for line in done.lines():
                self.report(line)

    def write_status(self, state: str) -> None:
        now = time.monotonic()
        jobstate.write_json(
            self.folder / jobstate.STATUS,
            {
                "owner": self.topology.name,
                "mode": "once" if self.once else "continuous",
                "state": state,
                "driver_pid": os.getpid(),
                "started_at": self.started_at,
                "updated_at": time.time(),
                "flows": [status.to_dict(now) for status in self.flows.values()],
            },
        )


def _load(file: str, sha256: str) -> Topology:
    text = Path(file).read_text(encoding="utf-8")
    if hashlib.sha256(text.encode()).hexdigest() != sha256:
        raise TopoError(f"{file} changed since it was applied; run `topo apply` again")
    analysis = analyse(text, file)
    if not analysis.ok or analysis.topology is None:
        raise TopoError(f"{file} has errors; run `topo validate {file}`")
    return analysis.topology


def _record_pid(folder: Path) -> None:
    """Add this program's pid to driver.json, which the launcher wrote: `topo stop` signals it."""
    recorded = jobstate.read_json(folder / jobstate.DRIVER)
    if isinstance(recorded, dict):
        jobstate.write_json(folder / jobstate.DRIVER, {**recorded, "driver_pid": os.getpid()})


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="topo-driver")
    parser.add_argument("--state", required=True)
    parser.add_argument("--topology", required=True)
    parser.add_argument("--sha256", required=True)
    parser.add_argument("--mode", choices=("once", "continuous"), required=True)
    args = parser.parse_args(argv)
    folder = Path(args.state)

    def report(line: str) -> None:
        print(f"topo: {line}", flush=True)

    try:
        topology = _load(args.topology, args.sha256)
    except (OSError, TopoError) as problem:
        report(f"error: {problem}")
        return 1
    _record_pid(folder)
    spark = SparkSession.builder.getOrCreate()
    replicator = Replicator(spark, topology, folder, args.mode == "once", report)

    def on_term(_signum: int, _frame: object) -> None:
        replicator.stopping = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    try:
        code = replicator.run_once() if replicator.once else replicator.run_continuously()
    except TopoError as problem:
        report(f"error: {problem}")
        replicator.write_status("failed")
        code = 1
    spark.stop()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
