"""A flow that takes over from MirrorMaker 2 (`start: mm2`): where each of its source partitions
resumes, as the plan shows it and the started job reads it. Pure.

For each partition the flow copies now: MM2's committed position (the offset after the last
record MM2 copied, topology/core/mm2/positions.py) and the records waiting beyond it; a
partition MM2 never copied starts at its earliest offset, as a new flow's would. Refused
while MM2's status
topic says it still runs the flow: a second replicator would copy every record twice. A flow
topo has copied before (it has progress of its own) is not handed over again: it goes on from
its own committed positions, and the caller reads no handover for it.
"""

from collections.abc import Mapping
from typing import Any

from topology.core.errors import TopoError
from topology.core.jobs import JobSpec
from topology.core.mm2.positions import Handover
from topology.core.observed import Cluster


class HandoverError(TopoError):
    """A flow cannot take over from MM2 now (it still runs, or left nothing to resume from)."""


def resume(
    spec: JobSpec, source: Cluster, topics: Mapping[str, str], found: Handover
) -> dict[str, Any]:
    """The `resume` part of the flow's create change: MM2's offsets topic, every partition of
    the flow's topics with its start (an offset, or None for the earliest) and the records
    waiting, and their total."""
    if found.running:
        raise HandoverError(
            f"flow {spec.flow} has start: mm2, but MirrorMaker 2 still runs it: its status "
            f"topic {found.status_topic} on {spec.target} shows its {found.running[0]}; stop "
            "MM2 cleanly first, or both would copy every record (a MM2 that crashed leaves "
            "this status: start it and stop it again)"
        )
    if not found.positions:
        raise HandoverError(
            f"flow {spec.flow} has start: mm2, but {found.offsets_topic} on {spec.target} holds "
            f"no position MirrorMaker 2 committed for cluster {spec.source!r}: was MM2 run "
            "with this alias for it? (or start the flow at earliest or latest)"
        )
    partitions: list[dict[str, Any]] = []
    for topic in sorted(topics):
        count = source.topics[topic].partitions if topic in source.topics else 0
        for number in range(count):
            at = found.positions.get((topic, number))
            partitions.append(
                {
                    "topic": topic,
                    "partition": number,
                    "offset": at,
                    "waiting": found.waiting((topic, number)),
                }
            )
    if all(item["offset"] is None for item in partitions):
        copied = sorted({topic for topic, _partition in found.positions})
        shown = ", ".join(copied[:5]) + (" ..." if len(copied) > 5 else "")
        raise HandoverError(
            f"flow {spec.flow} has start: mm2, but MirrorMaker 2 left no position for any "
            f"topic it copies now (MM2 copied {shown} from {spec.source}): every partition "
            "would start at its earliest offset, a second copy of what MM2 copied; check the "
            "flow's topics filter"
        )
    return {
        "from": "mm2",
        "offsets_topic": found.offsets_topic,
        "partitions": partitions,
        "waiting": sum(p["waiting"] or 0 for p in partitions),
    }


def starts(resumed: Mapping[str, Any]) -> dict[str, dict[int, int]]:
    """A `resume` part read back as the job wants it: topic -> partition -> offset, for the
    partitions that resume at MM2's position."""
    found: dict[str, dict[int, int]] = {}
    for item in resumed.get("partitions", []):
        if item.get("offset") is not None:
            found.setdefault(str(item["topic"]), {})[int(item["partition"])] = int(item["offset"])
    return found
