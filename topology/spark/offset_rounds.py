"""The driver's offset rounds: each flow's progress recorded on its target, and checkpoints and
consumer group offset sync (`ops.rounds.Checkpointer`) every few seconds, beside the copy."""

import threading
import time
from collections.abc import Callable, Mapping

from topology.core import observed
from topology.core.errors import TopoError
from topology.core.flow_status import FlowStatus, first_line
from topology.core.model import Topology
from topology.core.naming import PROGRESS_GROUPS, offset_syncs_topic
from topology.core.offsets import checkpoints
from topology.kafka import inventory
from topology.kafka.offsets import LogWriter
from topology.kafka.offsets_port import KafkaOffsets
from topology.ops.rounds import (
    Checkpointer,
    Position,
    found_new,
    progress_counts,
    read_by_groups,
)
from topology.telemetry.figures import Figures

PROGRESS_FLUSH = 2.0  # seconds the progress records are waited for; retried next second


class OffsetRounds:
    def __init__(
        self,
        topology: Topology,
        configs: dict[str, dict[str, str]],
        flows: set[str],
        once: bool,
        figures: Figures,
        report: Callable[..., None],
    ) -> None:
        self.configs = configs
        self.flows = flows
        self.once = once
        self.figures = figures
        self.report = report
        self.checkpointer = Checkpointer(topology, configs, KafkaOffsets())
        self.writers: dict[str, LogWriter] = {}  # progress logs, by target cluster
        self.recorded: dict[str, dict[tuple[str, int], int]] = {}  # progress written, per flow
        self.clusters = inventory.Observers(configs)  # one admin client each, kept
        self.moved: set[Position] = set()  # progress recorded since the last round began
        self.lock = threading.Lock()  # for `moved` and `outcome`: the driver's loop and a round
        self.observed: Mapping[str, observed.Cluster] | None = None  # by the last round
        self.read: frozenset[Position] | None = None  # what its groups read
        self.outcome: bool | None = None  # whether the last round found anything new

    def record(self, statuses: Mapping[str, FlowStatus]) -> bool:
        """Write how far each flow has processed its source partitions to its progress log on
        the target (`topo-offset-syncs.<source>.internal`), where they changed since last time
        (only the partitions whose position moved are looked at). True when a partition that
        a consumer group reads moved (or no round has looked at the groups yet)."""
        wrote: set[Position] = set()
        for flow, status in statuses.items():
            before = self.recorded.setdefault(flow, {})
            moved, status.unrecorded = status.unrecorded, set()
            changed = {
                k: status.processed[k] for k in moved if before.get(k) != status.processed[k]
            }
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
                status.unrecorded |= moved  # written at the next turn
                self.figures.error(flow, "progress")
                self.report(f"{flow}: could not record its progress: {problem}")
                continue
            before.update(changed)
            wrote |= {(spec.source, topic, partition) for topic, partition in changed}
        with self.lock:
            self.moved |= wrote
        return progress_counts(self.read, wrote)

    def take_outcome(self) -> bool | None:
        """Whether the last round found anything new (`ops.rounds.found_new`), once: None
        until a round has ended since the last call."""
        with self.lock:
            outcome, self.outcome = self.outcome, None
        return outcome

    def offsets(self) -> None:
        """Checkpoints and group offset sync for every flow (topology/ops/rounds.py)."""
        with self.lock:
            moved, self.moved = frozenset(self.moved), set()
        try:
            # topo's own progress groups are never translated: not read
            clusters = self.clusters.observe_all(settings=False, skip_groups=PROGRESS_GROUPS)
            done = self.checkpointer.run(clusters, self.report)
        except Exception as problem:  # the copy goes on; the next round tries again
            self.figures.error(None, "offsets")
            self.report(f"offsets: {first_line(str(problem)) or type(problem).__name__}")
            self.observed, self.read = None, None
            with self.lock:
                self.outcome = True
            return
        outcome = found_new(done, self.observed, clusters, moved)
        self.observed, self.read = clusters, read_by_groups(clusters)
        with self.lock:
            self.outcome = outcome
        self.figures.offsets_round(done.checkpoints, done.committed)
        for flow, written in list(self.checkpointer.written.items()):
            if flow in self.flows:
                newest: dict[str, int] = {}
                for checkpoint in list(written.values()):
                    newest[checkpoint.group] = max(
                        newest.get(checkpoint.group, 0), checkpoint.at_ms
                    )
                self.figures.checkpoints(flow, newest)
        if self.once or done.checkpoints or done.committed or done.active:
            for line in done.lines():
                self.report(line)
