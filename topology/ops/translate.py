"""Translate a group's committed offsets from one cluster to another, reading live clusters.

The rules are pure (topology/offsets/route.py, search.py); this module does the reading: each
partition's stamped copies, and each flow's recorded progress, which says whether everything the
group had consumed has reached the destination yet (docs/offsets.md). It reads through an
injected `ports.OffsetsAdapter` (the Kafka one in production, a fake in the unit tests).
"""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from topology import observed
from topology.model import Topology
from topology.naming import offset_syncs_topic
from topology.offsets import search
from topology.offsets.route import Hop, NoRoute, Route, Unstamped, route
from topology.ops.ports import OffsetsAdapter, ReaderLike


@dataclass(frozen=True)
class Translation:
    group: str
    origin: str
    topic: str
    partition: int
    offset: int  # committed on the origin
    destination: str
    destination_topic: str | None
    position: int | None  # where the group resumes on the destination; None: cannot tell
    exact: bool = True
    replicated: bool = True  # every record before `offset` that flows there has arrived
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Translator:
    """Translates offsets between the clusters of one topology; keeps its readers open."""

    def __init__(
        self,
        topology: Topology,
        clusters: Mapping[str, observed.Cluster],
        configs: Mapping[str, dict[str, str]],
        adapter: OffsetsAdapter,
    ) -> None:
        self.topology = topology
        self.clusters = clusters
        self.configs = configs
        self.adapter = adapter
        self._readers: dict[str, ReaderLike] = {}
        self._progress: dict[str, dict[tuple[str, int], int]] = {}
        self._routes: dict[tuple[str, str, str], Route | str | None] = {}

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()

    def translate(
        self, group: str, origin: str, destination: str, committed: Mapping[tuple[str, int], int]
    ) -> list[Translation]:
        """Each committed (topic, partition) the topology links with `destination`."""
        found = []
        for (topic, partition), offset in sorted(committed.items()):
            linked = self.route(origin, topic, destination)
            if isinstance(linked, Route):
                found.append(self._one(group, linked, partition, offset))
            elif linked is not None:  # copied, but without source offsets: say why
                found.append(Translation(group, origin, topic, partition, offset, destination,
                                         None, None, replicated=False, note=linked))  # fmt: skip
        return found

    def route(self, origin: str, topic: str, destination: str) -> Route | str | None:
        """The topic's route (worked out once per topic: groups share topics); why it cannot
        be translated when it is copied without source offsets; None when it is not copied."""
        key = (origin, topic, destination)
        if key not in self._routes:
            try:
                self._routes[key] = route(self.topology, self.clusters, origin, topic, destination)
            except Unstamped as problem:
                self._routes[key] = str(problem)
            except NoRoute:
                self._routes[key] = None
        return self._routes[key]

    def _one(self, group: str, linked: Route, partition: int, offset: int) -> Translation:
        base = Translation(group, linked.origin, linked.topic, partition, offset,
                           linked.destination, linked.destination_topic, None)  # fmt: skip
        where = self.clusters[linked.destination].topics.get(linked.destination_topic)
        if where is None or partition >= where.partitions:
            return replace(base, replicated=False,
                            note=f"{linked.destination_topic} [{partition}] is not on "
                                 f"{linked.destination} yet")  # fmt: skip
        if not linked.forward:
            return replace(base, position=self._upstream(linked, partition, offset))
        position, replicated, note = self._downstream(linked, partition, offset)
        window = self._upstream_window(linked, partition, offset) if linked.backward else None
        if window is not None and window[1] is None:
            # None of the destination's own records after the group's position has reached the
            # origin: the first one the flow back has not processed yet is where they start.
            back = linked.backward[0]
            window = (window[0], self.progress(back).get((back.source_topic, partition)))
        if window is None or window == (None, None):  # no records of the destination's own
            return replace(base, position=position, replicated=replicated, note=note)
        latest = self._latest(linked, partition, position)
        merged, repeats = search.merged_position((position, latest), window)
        if repeats:
            mixed = (f"both clusters write {linked.topic} and order it differently: the group "
                     f"may read up to {repeats} records again")  # fmt: skip
            note = mixed if note is None else f"{note}; {mixed}"
        return replace(base, position=merged, exact=not repeats, replicated=replicated,
                        note=note)  # fmt: skip

    def _downstream(
        self, linked: Route, partition: int, offset: int
    ) -> tuple[int, bool, str | None]:
        """(position on the destination, replicated far enough, why not) for a forward route."""
        origin = linked.origin
        needed = offset
        replicated, note = True, None
        for number, hop in enumerate(linked.forward):
            if number > 0:  # where the group's position lies on this hop's source
                needed = self._position(hop.source, hop.source_topic, partition, origin, offset)
            reached = self.progress(hop).get((hop.source_topic, partition))
            if reached is None or reached < needed:
                replicated = False
                done = "nothing recorded yet" if reached is None else f"up to {reached}"
                note = (f"flow {hop.edge} has copied {hop.source_topic} [{partition}] {done}, "
                        f"short of {needed}")  # fmt: skip
                break
        position = self._position(linked.destination, linked.destination_topic, partition,
                                  origin, offset)  # fmt: skip
        return position, replicated, note

    def _position(self, cluster: str, topic: str, partition: int, origin: str, offset: int) -> int:
        reader = self.reader(cluster)
        low, high = reader.bounds(topic, partition)
        return search.downstream_position(
            low, high, offset, lambda at: reader.first_stamped(topic, partition, at, origin)
        )

    def _latest(self, linked: Route, partition: int, position: int) -> int:
        """The latest exact position for the origin's copies: the first unconsumed one."""
        reader = self.reader(linked.destination)
        topic = linked.destination_topic
        found = reader.first_stamped(topic, partition, position, linked.origin)
        return found[0] if found is not None else reader.bounds(topic, partition)[1]

    def _upstream(self, linked: Route, partition: int, offset: int) -> int | None:
        """The position on the destination for a backward route (failback)."""
        start, _end = self.reader(linked.destination).bounds(linked.destination_topic, partition)
        return search.upstream_position(offset, *self._back_probes(linked, partition), start)

    def _upstream_window(
        self, linked: Route, partition: int, offset: int
    ) -> tuple[int | None, int | None]:
        return search.upstream_window(offset, *self._back_probes(linked, partition))

    def _back_probes(self, linked: Route, partition: int) -> tuple[search.Probe, search.BackProbe]:
        """Probes over the origin's copies of the destination's records."""
        reader = self.reader(linked.origin)
        topic, upstream = linked.topic, linked.destination
        return (
            lambda at: reader.first_stamped(topic, partition, at, upstream),
            lambda at: reader.last_stamped_before(topic, partition, at, upstream),
        )

    def reader(self, cluster: str) -> ReaderLike:
        if cluster not in self._readers:
            self._readers[cluster] = self.adapter.reader(self.configs[cluster])
        return self._readers[cluster]

    def progress(self, hop: Hop) -> dict[tuple[str, int], int]:
        """How far the hop's flow has processed each source partition, from its progress log."""
        if hop.edge not in self._progress:
            separator = self.topology.edge(hop.edge).settings.separator
            log = offset_syncs_topic(hop.source, separator)
            self._progress[hop.edge] = self.adapter.read_progress(
                self.configs[hop.target], log, hop.edge
            )
        return self._progress[hop.edge]
