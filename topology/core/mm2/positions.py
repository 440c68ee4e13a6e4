"""Where a MirrorMaker 2 flow had got to: its committed source positions, as MM2's Connect
worker keeps them, and what a handover to topo starts from.

MM2 in dedicated mode runs one Connect worker per flow, whose topics are on the target
cluster. Its MirrorSourceConnector commits, per source partition, the offset of the last
record it copied to the worker's offsets topic there (`mm2-offsets.<source>.internal`). A record
of that topic is JSON: key `["MirrorSourceConnector", {"cluster": "<source alias>", "partition":
0, "topic": "orders"}]`, value `{"offset": 41}`; a later record for the same key replaces it, a
null value forgets it. MM2 restarting resumes at the offset after it (41 + 1): so does topo.

The worker's status topic (`mm2-status.<source>.internal`) says whether MM2 still runs the
flow: its connector's and tasks' state, RUNNING while they run, UNASSIGNED once MM2 stopped
cleanly. (The worker group, `<source>-mm2`, is of Connect's protocol, which the Kafka client
topo uses neither lists nor describes.) MM2 run as connectors on a Connect cluster keeps the
same records in that cluster's topics, under its connector's own name: a flow's `mm2` setting
(`model.Mm2State`) names them, and `names` fills in its clusters.

Pure: the Kafka adapter reads the records (topology/kafka/mm2_state.py).
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from topology.core.model import Edge, Mm2State

Partition = tuple[str, int]  # (source topic, partition)
DEDICATED = Mm2State()  # MM2's own names in dedicated mode (connect-mirror-maker.sh)
CONNECTOR = DEDICATED.connector


@dataclass(frozen=True)
class Names:
    """Where one flow's MM2 keeps its Connect state on the flow's target."""

    offsets_topic: str
    status_topic: str
    connector: str


def names(source: str, target: str, state: Mm2State = DEDICATED) -> Names:
    """`state` (MM2's dedicated mode by default) for the flow from `source` to `target`."""

    def filled(template: str) -> str:
        return template.replace("{source}", source).replace("{target}", target)

    return Names(filled(state.offsets_topic), filled(state.status_topic), filled(state.connector))


def names_of(edge: Edge) -> Names:
    """The names the edge's `mm2` setting gives."""
    return names(edge.source, edge.target, edge.settings.mm2)


def offset_syncs_topic(target: str) -> str:
    """MM2's default offset-syncs topic of the flows to `target`, on their source cluster
    (`offset-syncs.topic.location=source`): topology/core/mm2/wire.py says what its records hold."""
    return f"mm2-offset-syncs.{target}.internal"


def offset_record(
    source: str, topic: str, partition: int, next_offset: int, connector: str = CONNECTOR
) -> tuple[bytes, bytes]:
    """The record MM2's worker reads to resume copying `topic` [`partition`] of `source` at
    `next_offset`: byte for byte what its source connector (named `connector`) commits
    (Connect's JsonConverter, fields in the order it writes them), so the worker finds it under
    the same key."""
    where = {"cluster": source, "partition": partition, "topic": topic}
    key = json.dumps([connector, where], separators=(",", ":"), ensure_ascii=False)
    value = json.dumps({"offset": next_offset - 1}, separators=(",", ":"))
    return key.encode(), value.encode()


def further_on(
    theirs: Mapping[Partition, int], ours: Mapping[Partition, int]
) -> list[tuple[Partition, int, int]]:
    """The partitions where MM2 resumes beyond where topo stopped (MM2 ran after topo), as
    (partition, MM2's position, topo's), in order: writing topo's there would rewind MM2."""
    return [
        (key, at, ours[key]) for key, at in sorted(theirs.items()) if key in ours and at > ours[key]
    ]


def running(
    records: Iterable[tuple[bytes | None, bytes | None]], connector: str = CONNECTOR
) -> tuple[str, ...]:
    """The parts of MM2's source connector (named `connector`) that its worker's status topic
    (where Connect records each connector's and task's state: RUNNING while it runs,
    UNASSIGNED once stopped cleanly) says run now, as `task 0 on worker <id> (RUNNING)`: the
    newest record of the connector and of each task, in log order (`records`), whose state is
    one of ALIVE."""
    newest: dict[str, Any] = {}
    for key, value in records:
        name = (key or b"").decode("utf-8", "replace")
        task = name.removeprefix(f"status-task-{connector}-")
        # (a task's number after the name: not a task of `<connector>-backup`)
        if name == f"status-connector-{connector}" or (task != name and task.isdigit()):
            try:
                newest[name] = json.loads(value) if value is not None else None
            except ValueError:
                newest[name] = None
    found = []
    for name, state in sorted(newest.items()):
        if isinstance(state, dict) and state.get("state") in ALIVE:
            part = (
                "connector"
                if name.startswith("status-connector-")
                else ("task " + name.rsplit("-", 1)[-1])
            )
            found.append(f"{part} on worker {state.get('worker_id', '?')} ({state['state']})")
    return tuple(found)


# Connect's states of a connector or task whose worker still holds it (paused or restarting, it
# copies again without anyone asking); UNASSIGNED, STOPPED, FAILED and DESTROYED do not copy.
ALIVE = ("RUNNING", "PAUSED", "RESTARTING")


def resume_positions(
    records: Iterable[tuple[bytes | None, bytes | None]], source: str, connector: str = CONNECTOR
) -> dict[Partition, int]:
    """Per partition of `source` MM2's `connector` copied from, the offset of the next record
    to copy: the committed offset plus one. `records` are the offsets topic's (key, value)
    pairs in log order; records of other connectors (a Connect cluster's offsets topic holds
    every connector's), other source clusters or another shape are ignored."""
    found: dict[Partition, int] = {}
    for key, value in records:
        partition = _partition(key, source, connector)
        if partition is None:
            continue
        offset = _offset(value)
        if offset is None:
            found.pop(partition, None)  # a tombstone (or an unreadable value): no position
        else:
            found[partition] = offset + 1
    return found


def _partition(key: bytes | None, source: str, connector: str) -> Partition | None:
    try:
        decoded = json.loads(key or b"")
    except ValueError:
        return None
    if not (isinstance(decoded, list) and len(decoded) == 2 and isinstance(decoded[1], dict)):
        return None
    if decoded[0] != connector:
        return None
    where: dict[str, Any] = decoded[1]
    if set(where) != {"cluster", "topic", "partition"} or where["cluster"] != source:
        return None
    topic, number = where["topic"], where["partition"]
    if not isinstance(topic, str) or not isinstance(number, int) or isinstance(number, bool):
        return None
    return topic, number


def _offset(value: bytes | None) -> int | None:
    if value is None:
        return None
    try:
        decoded = json.loads(value)
    except ValueError:
        return None
    offset = decoded.get("offset") if isinstance(decoded, dict) else None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        return None
    return offset


@dataclass(frozen=True)
class Handover:
    """What `start: mm2` reads for one flow before it is started: MM2's positions and whether
    MM2 still runs it (`running`: the parts of its source connector its status topic says
    run, none once MM2 stopped cleanly); `ends` the source partitions' end offsets, for the
    records waiting."""

    flow: str
    offsets_topic: str
    status_topic: str
    running: tuple[str, ...]
    positions: Mapping[Partition, int] = field(default_factory=dict)
    ends: Mapping[Partition, int] = field(default_factory=dict)

    def waiting(self, partition: Partition) -> int | None:
        end = self.ends.get(partition)
        at = self.positions.get(partition)
        return None if end is None or at is None else max(0, end - at)

    def to_dict(self) -> dict[str, Any]:
        """What a plan's digest notes (the ends move while producers write: left out)."""
        return {
            "offsets_topic": self.offsets_topic,
            "status_topic": self.status_topic,
            "running": list(self.running),
            "positions": [[t, p, o] for (t, p), o in sorted(self.positions.items())],
        }


def starting_offsets(
    resume: Mapping[str, Mapping[int, int]], partitions: Mapping[str, int]
) -> dict[str, dict[str, int]]:
    """Spark's `startingOffsets` JSON value for a query of the topics in `partitions` (topic ->
    partition count): MM2's position where there is one, else the earliest offset (-2). Spark
    wants every partition of every subscribed topic named."""
    return {
        topic: {str(number): resume.get(topic, {}).get(number, EARLIEST) for number in range(count)}
        for topic, count in sorted(partitions.items())
    }


EARLIEST = -2  # Spark's code for a partition's earliest offset in startingOffsets
