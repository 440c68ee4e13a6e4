"""Translate a group's committed offsets from one cluster to another, reading live clusters.

The rules are pure (topology/core/offsets/route.py, search.py); this module does the reading: each
partition's stamped copies, and each flow's recorded progress, which says whether everything the
group had consumed has reached the destination yet (docs/offsets.md). It reads through an
injected `ports.OffsetsAdapter` (the Kafka one in production, a fake in the unit tests).
"""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from topology.core import observed
from topology.core.mm2.positions import names_of
from topology.core.mm2.positions import offset_syncs_topic as mm2_offset_syncs_topic
from topology.core.mm2.wire import OffsetSync
from topology.core.model import Topology
from topology.core.naming import offset_syncs_topic
from topology.core.offsets import search
from topology.core.offsets.route import Hop, NoRoute, Route, Unstamped, route
from topology.ops.mm2_copies import Known, Mm2Copies, Stretch, Tail, Unsure, settled, stretches
from topology.ops.ports import OffsetsAdapter


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
    # The newest checkpoint in MM2's format on the destination for this group and partition:
    # what MM2's RemoteClusterUtils.translateOffsets answers now (written by MM2, or by topo)
    mm2_checkpoint: int | None = None
    # Records the group may read again from `position`: 0 where exact, else at most this many;
    # None where no position is known or no bound can be told
    rereads: int | None = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_MM2_UNTOLD = (
    "MirrorMaker 2 copied the records here and its offset-syncs do not tell which each is "
    "(docs/offsets.md): the group may read some again"
)


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
        self._readers: dict[str, Mm2Copies] = {}
        self._progress: dict[str, dict[tuple[str, int], int]] = {}
        self._routes: dict[tuple[str, str, str], Route | str | None] = {}
        # The hop that copies each (source cluster, target cluster, target topic), as routed
        self._hops: dict[tuple[str, str, str], Hop] = {}
        self._syncs: dict[str, list[OffsetSync]] = {}  # per edge that took over from MM2
        self._resumes: dict[str, dict[tuple[str, int], int]] = {}
        self._stretches: dict[tuple[str, str, int, str], list[Known]] = {}

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
                found.append(
                    Translation(
                        group,
                        origin,
                        topic,
                        partition,
                        offset,
                        destination,
                        None,
                        None,
                        replicated=False,
                        note=linked,
                        rereads=None,
                    )
                )
        return found

    def route(self, origin: str, topic: str, destination: str) -> Route | str | None:
        """The topic's route (worked out once per topic: groups share topics); why it cannot
        be translated when it is copied without source offsets; None when it is not copied."""
        key = (origin, topic, destination)
        if key not in self._routes:
            try:
                found = route(self.topology, self.clusters, origin, topic, destination)
                self._routes[key] = found
                for hop in (*found.forward, *found.backward):
                    self._hops[(hop.source, hop.target, hop.target_topic)] = hop
            except Unstamped as problem:
                self._routes[key] = str(problem)
            except NoRoute:
                self._routes[key] = None
        return self._routes[key]

    def _one(self, group: str, linked: Route, partition: int, offset: int) -> Translation:
        base = Translation(
            group,
            linked.origin,
            linked.topic,
            partition,
            offset,
            linked.destination,
            linked.destination_topic,
            None,
        )
        where = self.clusters[linked.destination].topics.get(linked.destination_topic)
        if where is None or partition >= where.partitions:
            return replace(
                base,
                replicated=False,
                note=f"{linked.destination_topic} [{partition}] is not on {linked.destination} yet",
                rereads=None,
            )
        if not linked.forward:
            return self._failback(base, linked, partition, offset)
        position, replicated, note = self._downstream(linked, partition, offset)
        untold = self._took_over(linked.forward[-1]) and not self._told_around(
            linked, partition, position
        )
        if untold:
            note = _MM2_UNTOLD if note is None else f"{note}; {_MM2_UNTOLD}"
        window = self._upstream_window(linked, partition, offset) if linked.backward else None
        if window is not None and window[1] is None:
            # None of the destination's own records after the group's position has reached the
            # origin: the first one the flow back has not processed yet is where they start.
            back = linked.backward[0]
            window = (window[0], self.progress(back).get((back.source_topic, partition)))
        if window is None or window == (None, None):  # no records of the destination's own
            # untold: the first unconsumed copy lies between here and the next copy known
            rereads = self._latest(linked, partition, position) - position if untold else 0
            return replace(
                base,
                position=position,
                exact=not untold,
                replicated=replicated,
                note=note,
                rereads=rereads,
            )
        latest = self._latest(linked, partition, position)
        merged, repeats = search.merged_position((position, latest), window)
        if repeats:
            mixed = (
                f"both clusters write {linked.topic} and order it differently: the group "
                f"may read up to {repeats} records again"
            )
            note = mixed if note is None else f"{note}; {mixed}"
        return replace(
            base,
            position=merged,
            exact=not repeats and not untold,
            replicated=replicated,
            note=note,
            rereads=max(repeats, latest - merged if untold else 0, 0),
        )

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
                note = (
                    f"flow {hop.edge} has copied {hop.source_topic} [{partition}] {done}, "
                    f"short of {needed}"
                )
                break
        position = self._position(
            linked.destination, linked.destination_topic, partition, origin, offset
        )
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

    def _failback(
        self, base: Translation, linked: Route, partition: int, offset: int
    ) -> Translation:
        """The translation for a backward route. Where the group's first unconsumed record on
        the origin is a copy MM2 made that its syncs do not tell, it resumes after the last
        copy it consumed that they do tell (re-reading rather than skipping)."""
        start, _end = self.reader(linked.destination).bounds(linked.destination_topic, partition)
        probes = self._back_probes(linked, partition)
        hop = linked.backward[-1]
        here = self.reader(linked.origin)
        caught_up = offset >= here.bounds(linked.topic, partition)[1]
        if (
            self._took_over(hop)
            and not caught_up
            and not here.told(linked.topic, partition, hop.source, offset)
        ):
            earliest, latest = search.upstream_window(offset, *probes)
            position = earliest if earliest is not None else start
            rereads = None if latest is None else max(0, latest - position)
            return replace(base, position=position, exact=False, note=_MM2_UNTOLD, rereads=rereads)
        return replace(base, position=search.upstream_position(offset, *probes, start))

    def _took_over(self, hop: Hop) -> bool:
        """Whether the hop's flow took over from MM2, so unstamped copies there are MM2's."""
        return self.topology.edge(hop.edge).settings.start == "mm2"

    def _told_around(self, linked: Route, partition: int, position: int) -> bool:
        """Whether the copies on each side of `position` (the last one the group consumed and
        the first one it did not) are known: the position is then exact."""
        reader = self.reader(linked.destination)
        topic, origin = linked.destination_topic, linked.origin
        low, high = reader.bounds(topic, partition)
        before = position <= low or reader.told(topic, partition, origin, position - 1)
        return before and (position >= high or reader.told(topic, partition, origin, position))

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

    def reader(self, cluster: str) -> Mm2Copies:
        """The cluster's reader, which also sees the copies MM2 made before a flow to it took
        over (topology/ops/mm2_copies.py)."""
        if cluster not in self._readers:
            inner = self.adapter.reader(self.configs[cluster])

            def lookup(topic: str, partition: int, stamped: str) -> list[Known]:
                return self._mm2(cluster, topic, partition, stamped)

            def settle(topic: str, partition: int, stamped: str, unsure: Unsure) -> list[Stretch]:
                hop = self._hops[(stamped, cluster, topic)]
                source = self.reader(stamped).reader
                read = source.offsets(hop.source_topic, partition, unsure.after + 1, unsure.before)
                copies = inner.offsets(topic, partition, unsure.start, unsure.end)
                return settled(read, copies)

            self._readers[cluster] = Mm2Copies(inner, lookup, settle)
        return self._readers[cluster]

    def _mm2(self, cluster: str, topic: str, partition: int, source: str) -> list[Known]:
        """MM2's exact stretches in `topic` [`partition`] on `cluster` copied from `source`,
        when the flow between them took over from MM2 (`start: mm2`); [] otherwise."""
        key = (cluster, topic, partition, source)
        if key in self._stretches:
            return self._stretches[key]
        hop = self._hops.get((source, cluster, topic))
        self._stretches[key] = []
        if hop is None or self.topology.edge(hop.edge).settings.start != "mm2":
            return []
        edge = self.topology.edge(hop.edge)
        if hop.edge not in self._syncs:
            log = mm2_offset_syncs_topic(cluster)
            self._syncs[hop.edge] = self.adapter.read_mm2_syncs(self.configs[source], log)
            self._resumes[hop.edge] = self.adapter.read_mm2_resumes(
                self.configs[cluster], source, names_of(edge)
            )
        syncs = [
            (s.upstream_offset, s.downstream_offset)
            for s in self._syncs[hop.edge]
            if (s.topic, s.partition) == (hop.source_topic, partition)
        ]
        if not syncs:
            return []
        self._stretches[key] = stretches(syncs, self._tail(hop, partition, syncs))
        return self._stretches[key]

    def _tail(self, hop: Hop, partition: int, syncs: list[tuple[int, int]]) -> Tail | None:
        """What closes MM2's last stretch: the first copy topo made after MM2's last sync (a
        pair as sure as a sync: its stamp), or, when topo has processed the partition and
        copied nothing there yet, the partition's end and MM2's committed position (the copies
        before the end are of records before it)."""
        newest = max(downstream for _upstream, downstream in syncs)
        inner = self._readers[hop.target].reader
        first = inner.first_stamped(hop.target_topic, partition, newest, hop.source)
        if first is not None:
            return Tail(first[0], first[1], copied=True)
        resume = self._resumes[hop.edge].get((hop.source_topic, partition))
        if resume is None or (hop.source_topic, partition) not in self.progress(hop):
            return None
        return Tail(inner.bounds(hop.target_topic, partition)[1], resume, copied=False)

    def progress(self, hop: Hop) -> dict[tuple[str, int], int]:
        """How far the hop's flow has processed each source partition, from its progress log."""
        if hop.edge not in self._progress:
            separator = self.topology.edge(hop.edge).settings.separator
            log = offset_syncs_topic(hop.source, separator)
            self._progress[hop.edge] = self.adapter.read_progress(
                self.configs[hop.target], log, hop.edge
            )
        return self._progress[hop.edge]
