"""`topo verify`: each replicated partition proven, record by record (`core/verify.py`).

For every flow (or the one asked for), every source topic it copies now and each partition:
the window both sides hold is worked out (the source's log start; where the target does not
hold the flow's copies from the start, its first copy; up to the flow's recorded progress),
the source's records there are read committed and passed through the flow's rules (the loop
rules, and its filter through the injected `Keeps`), the target's copies of this source are
read by their stamps, and the two are compared in step. Partitions are read in parallel, each
as two streams in batches: memory does not grow with the partition. Reads go through an
injected `VerifyReader` (Kafka's in production, a fake in the unit tests).

A flow that took over from MirrorMaker 2 (`start: mm2`) holds MM2's copies before topo's; they
carry no stamp, and MM2's offset-syncs tell their source offsets (`ops/mm2_copies.py`, as the
failover's search reads them): those copies are proven with topo's. Where the syncs do not tell
one for one and the records on both sides cannot settle it, the window starts after them.
"""

import contextlib
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Protocol

from topology.core import observed
from topology.core.errors import TopoError
from topology.core.jobs import (
    OFFSETS_HEADER,
    PROVENANCE_HEADER,
    JobSpec,
    forwards,
    hop_offsets,
    visited,
)
from topology.core.mm2.positions import offset_syncs_topic as mm2_offset_syncs_topic
from topology.core.mm2.wire import OffsetSync
from topology.core.naming import HEARTBEATS, offset_syncs_topic
from topology.core.verify import Copy, Held, PartitionProof, Stored, compare
from topology.ops.mm2_copies import Stretch, Tail, Unsure, settled, stretches

BATCH = 2000  # records read (and filtered) at a time
WORKERS = 4  # partitions read at once


class PartitionsLike(Protocol):
    def bounds(self, topic: str, partition: int) -> tuple[int, int]: ...

    def records(self, topic: str, partition: int, start: int, end: int) -> Iterator[Stored]: ...

    def close(self) -> None: ...


class VerifyReader(Protocol):
    def partitions(self, cluster: str) -> PartitionsLike:
        """A reader of one cluster's partitions, for one thread."""
        ...

    def progress(self, cluster: str, topic: str, flow: str) -> dict[tuple[str, int], int]:
        """How far `flow` has copied each source partition, from its progress log `topic` on
        its target `cluster`."""
        ...

    def mm2_syncs(self, cluster: str, topic: str) -> Sequence[OffsetSync]:
        """MirrorMaker 2's offset-syncs in `topic` on `cluster` (its flow's source)."""
        ...


# The flow's filter on a batch of source records: which it keeps (Spark SQL, evaluated by
# Spark's own engine). Only asked for flows with a filter.
Keeps = Callable[[JobSpec, str, int, Sequence[Stored]], list[bool]]


@dataclass(frozen=True)
class Task:
    spec: JobSpec
    topic: str
    target_topic: str
    partition: int
    compacted: bool


def tasks(
    specs: Sequence[JobSpec],
    maps: Mapping[str, Mapping[str, str]],
    clusters: Mapping[str, observed.Cluster],
    topics: Sequence[str] = (),
) -> list[Task]:
    """Every partition to prove: each flow's source topics that it copies now (`maps`: flow
    -> source topic -> target topic) but the heartbeats, only `topics` when given, and whose
    copy exists."""
    found = []
    for spec in specs:
        source, target = clusters[spec.source], clusters[spec.target]
        for topic, remote in sorted(maps.get(spec.flow, {}).items()):
            if topic == HEARTBEATS or (topics and topic not in topics):
                continue  # heartbeats: topo's own, stamped on arrival, not the user's records
            shape = source.topics.get(topic)
            if shape is None or remote not in target.topics:
                continue
            compacted = "compact" in shape.configs.get("cleanup.policy", "")
            found += [
                Task(spec, topic, remote, number, compacted) for number in range(shape.partitions)
            ]
    return found


def prove(
    chosen: Sequence[Task],
    reader: VerifyReader,
    keeps: Keeps,
    done: Callable[[PartitionProof], None] = lambda _proof: None,
) -> list[PartitionProof]:
    """Each task's proof, in the order given; `done` is told of each as it finishes."""
    progress: dict[str, dict[tuple[str, int], int]] = {}
    syncs: dict[str, Sequence[OffsetSync]] = {}
    for spec in {task.spec.flow: task.spec for task in chosen}.values():
        log = offset_syncs_topic(spec.source, spec.separator)
        progress[spec.flow] = reader.progress(spec.target, log, spec.flow)
        if spec.start == "mm2":  # MM2's copies precede topo's: its syncs tell theirs
            syncs[spec.flow] = reader.mm2_syncs(spec.source, mm2_offset_syncs_topic(spec.target))

    def one(task: Task) -> PartitionProof:
        pairs = [
            (s.upstream_offset, s.downstream_offset)
            for s in syncs.get(task.spec.flow, ())
            if (s.topic, s.partition) == (task.topic, task.partition)
        ]
        proof = _proof(task, reader, keeps, progress[task.spec.flow], pairs)
        done(proof)
        return proof

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return list(pool.map(one, chosen))


def _proof(
    task: Task,
    reader: VerifyReader,
    keeps: Keeps,
    progress: Mapping[tuple[str, int], int],
    syncs: Sequence[tuple[int, int]] = (),
) -> PartitionProof:
    spec, number = task.spec, task.partition
    proof = PartitionProof(spec.flow, task.topic, number, task.target_topic, (0, 0))
    proof.compacted = task.compacted
    if not spec.provenance:
        proof.error = "provenance is off: the copies carry no source offsets to prove them by"
        return proof
    source, target = reader.partitions(spec.source), reader.partitions(spec.target)
    try:
        low, end = source.bounds(task.topic, number)
        target_low, target_end = target.bounds(task.target_topic, number)
        mm2: list[Stretch] = []
        unsure: list[Unsure] = []
        if syncs:
            mm2, unsure = _mm2_copies(source, target, task, syncs, target_end)
        with contextlib.closing(_copies(target, task, target_low, target_end, mm2=mm2)) as peek:
            first = next(peek, None)  # closed: the reader reads one partition at a time
        start = low
        if first is not None and (target_low > 0 or spec.start != "earliest"):
            start = max(low, first.source_offset)  # the target holds the flow's copies from here
        for gap in unsure:  # MM2's copies there are not known one for one: prove after them
            start = max(start, gap.before)
        upto = min(max(progress.get((task.topic, number), start), start), end)
        proof.window = (start, upto)
        proof.behind = end - upto
        superseded = None
        if task.compacted:  # a first pass: the newest copy of each key
            superseded = {}
            for copy in _copies(target, task, target_low, target_end, mm2=mm2):
                superseded[copy.content.key] = copy.source_offset
        copies = (
            copy
            for copy in _copies(target, task, target_low, target_end, proof, mm2)
            if start <= copy.source_offset < upto
        )
        expected = _expected(source, task, start, upto, keeps)
        proof.comparison = compare(expected, copies, superseded)
    except TopoError as problem:
        proof.error = str(problem)
    finally:
        source.close()
        target.close()
    return proof


def _copies(
    target: PartitionsLike,
    task: Task,
    start: int,
    end: int,
    others: PartitionProof | None = None,
    mm2: Sequence[Stretch] = (),
) -> Generator[Copy, None, None]:
    """The target's copies of the flow's source records, in target order: topo's by their
    stamps, MM2's by the stretches its syncs tell (`mm2`, in target order); the other records
    (other origins, the target's own, MM2's copies not told) counted on `others`."""
    source = task.spec.source
    stretch = iter(mm2)
    told = next(stretch, None)
    for record in target.records(task.target_topic, task.partition, start, end):
        while told is not None and told.end <= record.offset:
            told = next(stretch, None)
        clusters = visited(_text(record.last(PROVENANCE_HEADER)))
        hops = hop_offsets(record.last(OFFSETS_HEADER))
        if clusters and clusters[-1] == source and source in hops:
            yield Copy(hops[source], record.offset, record.content())
        elif told is not None and told.start <= record.offset and not clusters:
            yield Copy(told.at(record.offset), record.offset, record.content())
        elif others is not None:
            others.unstamped += 1


def _mm2_copies(
    source: PartitionsLike,
    target: PartitionsLike,
    task: Task,
    syncs: Sequence[tuple[int, int]],
    target_end: int,
) -> tuple[list[Stretch], list[Unsure]]:
    """What MM2's offset-syncs tell of its copies in the partition: the stretches copied one
    for one (closed by topo's first copy after the last sync), the unsure ones settled by the
    records on both sides where they can be; and those that cannot."""
    newest = max(downstream for _upstream, downstream in syncs)
    tail = None
    with contextlib.closing(_copies(target, task, newest + 1, target_end)) as after:
        first = next(after, None)
        if first is not None:
            tail = Tail(first.offset, first.source_offset, copied=True)
    known: list[Stretch] = []
    unsure: list[Unsure] = []
    for part in stretches(syncs, tail):
        if isinstance(part, Stretch):
            known.append(part)
            continue
        read = [
            r.offset
            for r in source.records(task.topic, task.partition, part.after + 1, part.before)
        ]
        copies = [
            r.offset
            for r in target.records(task.target_topic, task.partition, part.start, part.end)
        ]
        found = settled(read, copies)
        if found:
            known.extend(found)
        else:
            unsure.append(part)
    return sorted(known, key=lambda s: s.start), unsure


def _expected(
    source: PartitionsLike, task: Task, start: int, end: int, keeps: Keeps
) -> Iterator[Held]:
    """The source's records in [start, end) that the flow copies, in batches."""
    spec = task.spec
    read = source.records(task.topic, task.partition, start, end)
    while batch := list(islice(read, BATCH)):
        forwarded = [r for r in batch if forwards(spec, _text(r.last(PROVENANCE_HEADER)))]
        if spec.record_filter:
            kept = keeps(spec, task.topic, task.partition, forwarded)
        else:
            kept = [True] * len(forwarded)
        for record, keep in zip(forwarded, kept, strict=True):
            if keep:
                yield Held(record.offset, record.content())


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", "replace")
