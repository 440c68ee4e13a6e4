"""Reads a MirrorMaker 2 flow's state off its clusters for a handover (`start: mm2`): its
committed source positions from MM2's offsets topic and whether it runs from its status
topic, both on the target, and the source partitions' ends (topology/mm2/positions.py says
what they mean)."""

from collections.abc import Collection

from topology.errors import TopicNotFoundError
from topology.kafka import records
from topology.kafka.ends import PartitionEnds
from topology.mm2 import positions
from topology.mm2.positions import Handover


def handover(
    flow: str,
    source: str,
    source_config: dict[str, str],
    target_config: dict[str, str],
    topics: Collection[str],
    timeout: float = 30,
) -> Handover:
    """MM2's state for `flow`; the source ends are asked for the partitions of `topics` (the
    ones the flow copies now) only."""
    topic = positions.offsets_topic(source)
    resume = positions.resume_positions(_read(target_config, topic, timeout), source)
    mine = [partition for partition in resume if partition[0] in topics]
    ends = PartitionEnds(source_config).of(mine, timeout=timeout) if mine else {}
    status = positions.status_topic(source)
    return Handover(flow, topic, status, running(target_config, source, timeout), resume, ends)


def running(config: dict[str, str], source: str, timeout: float) -> tuple[str, ...]:
    """The parts of MM2's source connector for the flows from `source` that run now, by its
    status topic on their target (`positions.running`)."""
    return positions.running(_read(config, positions.status_topic(source), timeout))


Pair = tuple[bytes | None, bytes | None]


def _read(config: dict[str, str], topic: str, timeout: float) -> list[Pair]:
    try:
        return [(r.key, r.value) for r in records.read_topic(config, topic, timeout=timeout)]
    except TopicNotFoundError:
        return []
