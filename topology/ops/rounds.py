"""One round of checkpoints and group offset sync for every flow, as the running job does it.

For each edge (source -> target), each consumer group on the source that the flow's group
filter admits and that has offsets on topics the topology links with the target:
- its translated offsets are written on the target when they changed (never backwards unless
  the group rewound on the source): to `topo-checkpoints.<source>.internal` as topo's
  checkpoints and to `<source>.checkpoints.internal` in MM2's format;
- with `sync.group_offsets`, they are committed to the same group on the target while it has
  no members there, only where that moves the group forward. An active group is reported, not
  fought; a partition whose records have not all arrived yet waits for a later round.

The clusters are read and written through a `ports.OffsetsAdapter` (Kafka's unless one is
passed in).
"""

import time
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from topology.core import observed
from topology.core.errors import ActiveGroupError, TopoError
from topology.core.model import Edge, Topology
from topology.core.naming import PROGRESS_GROUPS, checkpoints_topic, topo_checkpoints_topic
from topology.core.offsets import checkpoints
from topology.core.offsets.checkpoints import Checkpoint
from topology.ops.ports import LogWriterLike, OffsetsAdapter
from topology.ops.translate import Translation, Translator


@dataclass
class Round:
    checkpoints: int = 0  # written
    committed: dict[str, int] = field(default_factory=dict)  # group -> partitions committed
    active: list[str] = field(default_factory=list)  # "group on cluster", not synced

    def lines(self) -> list[str]:
        found = [f"offsets: {self.checkpoints} checkpoint(s) written"]
        found += [
            f"offsets: group {g} synced ({n} partition(s))" for g, n in self.committed.items()
        ]
        found += [f"offsets: group {g} is active; its offsets were not synced" for g in self.active]
        return found


Position = tuple[str, str, int]  # a source partition: (cluster, topic, partition)


def read_by_groups(clusters: Mapping[str, observed.Cluster]) -> frozenset[Position]:
    """The partitions some consumer group has committed offsets on: only their progress can
    move a translation (a flow's heartbeats, copied every second, are read by none)."""
    return frozenset(
        (name, topic, partition)
        for name, cluster in clusters.items()
        for group in cluster.groups.values()
        for topic, partition in group.offsets
    )


def progress_counts(read: frozenset[Position] | None, moved: AbstractSet[Position]) -> bool:
    """Whether progress recorded on the `moved` partitions can change a round: when a group
    reads one of them (`read`, by `read_by_groups`), or before any round looked (None)."""
    return bool(moved) and (read is None or not read.isdisjoint(moved))


def found_new(
    done: Round,
    before: Mapping[str, observed.Cluster] | None,
    now: Mapping[str, observed.Cluster],
    moved: frozenset[Position],
) -> bool:
    """Whether a round found anything new, so that the next comes at the rounds' interval; one
    that did not may wait longer (the driver's cadence backs off). A round depends only on the
    clusters' topics and groups it observed (`now`, against the round `before` it; None for the
    first), the progress of the partitions groups read (`moved`: the source partitions whose
    copied position was recorded since the round before), and what it wrote: when none of
    these changed, the next round would write nothing either. (Copies another replicator
    makes meanwhile, MM2 before a handover, are not seen here: the next turn finds them, at
    most the longest wait later.)"""
    if before is None or done.checkpoints or done.committed:
        return True
    return progress_counts(read_by_groups(now), moved) or dict(before) != dict(now)


class Checkpointer:
    """Keeps the last checkpoint written per flow, group and partition across rounds."""

    def __init__(
        self,
        topology: Topology,
        configs: Mapping[str, dict[str, str]],
        adapter: OffsetsAdapter,
    ) -> None:
        self.topology = topology
        self.configs = configs
        self.adapter = adapter
        self.written: dict[str, dict[tuple[str, str, int], Checkpoint]] = {}

    def run(self, clusters: Mapping[str, observed.Cluster], report: Callable[[str], None]) -> Round:
        done = Round()
        translator = Translator(self.topology, clusters, self.configs, self.adapter)
        try:
            for edge in self.topology.edges():
                settings = edge.settings
                if not (settings.emit.checkpoints or settings.sync.group_offsets):
                    continue
                try:
                    self._edge(edge, clusters, translator, done)
                except TopoError as problem:
                    report(f"offsets of {edge.name}: {problem}")
        finally:
            translator.close()
        return done

    def _edge(
        self,
        edge: Edge,
        clusters: Mapping[str, observed.Cluster],
        translator: Translator,
        done: Round,
    ) -> None:
        source, target = clusters[edge.source], clusters[edge.target]
        logs = (
            topo_checkpoints_topic(edge.source, edge.settings.separator),
            checkpoints_topic(
                edge.source, edge.settings.separator, edge.settings.internal_separator
            ),
        )
        writer = self.adapter.log_writer(self.configs[edge.target])
        written = self._previous(edge, logs[0])
        for group_id, group in sorted(source.groups.items()):
            if group_id.startswith(PROGRESS_GROUPS) or not edge.settings.groups.admits(group_id):
                continue
            if not group.offsets:
                continue
            found = translator.translate(group_id, edge.source, edge.target, group.offsets)
            if not found:
                continue
            if edge.settings.emit.checkpoints:
                done.checkpoints += self._emit(found, written, writer, *logs)
            if edge.settings.sync.group_offsets:
                self._sync(edge, group_id, found, target, done)
        writer.flush()

    def _previous(self, edge: Edge, log: str) -> dict[tuple[str, str, int], Checkpoint]:
        """What earlier rounds wrote; read back from topo's topic the first time (a restart).
        The JSON checkpoints topo wrote to MM2's topic before it used MM2's format are not
        read here: each is written again, to both topics, so that neither misses a group that
        has not moved since."""
        if edge.name not in self.written:
            self.written[edge.name] = self.adapter.read_checkpoints(self.configs[edge.target], log)
        return self.written[edge.name]

    def _emit(
        self,
        found: list[Translation],
        written: dict[tuple[str, str, int], Checkpoint],
        writer: LogWriterLike,
        log: str,
        mm2_log: str,
    ) -> int:
        count = 0
        now = int(time.time() * 1000)
        for row in found:
            if row.position is None or row.destination_topic is None:
                continue
            new = Checkpoint(
                row.group,
                row.topic,
                row.partition,
                row.offset,
                row.destination_topic,
                row.position,
                row.exact,
                row.replicated,
                now,
            )
            emitted = checkpoints.to_emit(written.get(new.key), new)
            if emitted is not None:
                writer.write(log, [checkpoints.encode_checkpoint(emitted)])
                writer.write(mm2_log, [checkpoints.mm2_checkpoint(emitted)])
                written[new.key] = emitted
                count += 1
        return count

    def _sync(
        self,
        edge: Edge,
        group_id: str,
        found: list[Translation],
        target: observed.Cluster,
        done: Round,
    ) -> None:
        translated = {
            (row.destination_topic, row.partition): row.position
            for row in found
            if row.replicated and row.position is not None and row.destination_topic
        }
        there = target.groups.get(group_id)
        wanted = checkpoints.to_commit(translated, there.offsets if there else {})
        if not wanted:
            return
        groups = self.adapter.groups(self.configs[edge.target])
        if groups.state(group_id).members:
            done.active.append(f"{group_id} on {edge.target}")
            return
        try:
            groups.commit(group_id, wanted)
        except ActiveGroupError:
            done.active.append(f"{group_id} on {edge.target}")
            return
        done.committed[group_id] = done.committed.get(group_id, 0) + len(wanted)
