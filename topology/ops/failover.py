"""`topo failover` and `topo offsets`: a group's translated offsets, worked out now.

Live, when the cluster the group leaves answers: its committed offsets translated exactly from
the copies on the destination (translate.py). When it does not (the disaster case), from the
last checkpoints the running flow wrote on the destination.

Every decision is here (which groups, what is refused, all or nothing); the CLI parses and
prints. The clusters are read and written through an injected `ports.OffsetsAdapter`.
"""

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from topology.core import observed
from topology.core.errors import KafkaUnavailableError, TopoError
from topology.core.model import Topology
from topology.core.naming import checkpoints_topic, topo_checkpoints_topic
from topology.core.offsets import checkpoints
from topology.core.offsets.route import Route
from topology.ops.ports import OffsetsAdapter
from topology.ops.translate import Translation, Translator


@dataclass
class Move:
    """One group's translated offsets, and whether they may be committed."""

    group: str
    origin: str
    destination: str
    basis: str  # "live" or "checkpoints"
    rows: list[Translation] = field(default_factory=list)
    current: dict[tuple[str, int], int] = field(default_factory=dict)  # on the destination now
    refused: list[str] = field(default_factory=list)
    committed: bool = False
    # Per (origin topic, partition): what the origin holds that is not copied yet; only for a
    # failover (`Offsets.plan_failover`), where the origin answers and one flow links the two
    behind: dict[tuple[str, int], "Behind"] = field(default_factory=dict)

    @property
    def offsets(self) -> dict[tuple[str, int], int]:
        return {
            (row.destination_topic, row.partition): row.position
            for row in self.rows
            if row.position is not None and row.destination_topic is not None
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "from": self.origin,
            "to": self.destination,
            "basis": self.basis,
            "committed": self.committed,
            "refused": self.refused,
            "partitions": [
                {
                    **row.to_dict(),
                    "current": self.current.get((row.destination_topic or "", row.partition)),
                    "not_copied": _behind_dict(self.behind.get((row.topic, row.partition))),
                }
                for row in self.rows
            ],
        }


@dataclass(frozen=True)
class Behind:
    """What a failover now would leave behind of one origin partition: the records (offsets)
    the flow has not copied yet, and how old the oldest of them is by its own timestamp (the
    recovery point: what was written since then is not on the destination)."""

    records: int
    seconds: float | None  # None: nothing left behind, or its time could not be read


def behind(
    end: int, processed: int | None, start: int, oldest_ms: int | None, now_ms: int
) -> Behind:
    """The partition's `Behind`: `processed`, how far its flow has copied (None: nothing
    recorded yet, so everything the origin holds from `start`); `oldest_ms`, the timestamp of
    the first record not copied (None: there is none to read, only transaction markers or
    aborted records: nothing is left behind)."""
    first = start if processed is None else max(processed, start)
    if end <= first or oldest_ms is None:
        return Behind(0, None)
    return Behind(end - first, max(0.0, (now_ms - oldest_ms) / 1000))


def _behind_dict(found: Behind | None) -> dict[str, Any] | None:
    return None if found is None else {"records": found.records, "seconds": found.seconds}


class Offsets:
    """Reads what translation needs from a topology's clusters (each observed once, here: one
    that does not answer is noted in `down`), and moves groups between them."""

    def __init__(
        self,
        topology: Topology,
        configs: Mapping[str, dict[str, str]],
        report: Callable[[str], None],
        adapter: OffsetsAdapter,
        unreachable: Iterable[str] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.topology = topology
        self.clock = clock
        self.configs = configs
        self.report = report
        self.adapter = adapter
        self.clusters: dict[str, observed.Cluster] = {}
        self.down: dict[str, str] = {}  # cluster -> why it could not be read
        wanted = [name for name in configs if name not in unreachable]
        # Asked at once: one after another, 60 unreachable clusters took over 20 s.
        with ThreadPoolExecutor(max_workers=max(min(len(wanted), 32), 1)) as pool:
            asked = {name: pool.submit(adapter.observe, name, configs[name]) for name in wanted}
        for name, answer in asked.items():
            try:
                self.clusters[name] = answer.result()
            except KafkaUnavailableError as problem:
                self.down[name] = str(problem)

    def need(self, *names: str) -> None:
        for name in names:
            if name in self.down:
                raise TopoError(f"cluster {name} cannot be reached: {self.down[name]}")

    def failover(
        self, origin: str, destination: str, groups: Sequence[str] | None, force: bool
    ) -> list[Move]:
        """`topo failover`: `plan_failover`, then `commit` when no move is refused."""
        moves = self.plan_failover(origin, destination, groups, force)
        if not any(move.refused for move in moves):
            self.commit(moves)
        return moves

    def plan_failover(
        self, origin: str, destination: str, groups: Sequence[str] | None, force: bool
    ) -> list[Move]:
        """Each group's move from `origin` to `destination`, checked (`Move.refused`) and
        priced (`Move.behind`, the rows' `rereads`), committing nothing.

        `groups` None (`--all`): every group on `origin` that the flows between the two admit,
        with offsets on topics they link. TopoError when there is no group to move."""
        self.need(destination)  # before anything is read from it
        every = groups is None
        chosen = self.groups_on(origin, destination) if every else list(dict.fromkeys(groups or []))
        if not chosen:
            raise TopoError(f"no consumer group on {origin} is replicated to {destination}")
        moves = self.moves(chosen, origin, destination, priced=True)
        if every:  # only the groups with offsets on topics replicated between the two
            moves = [move for move in moves if move.rows]
            if not moves:
                raise TopoError(f"no consumer group on {origin} is replicated to {destination}")
        there = self.adapter.groups(self.configs[destination])
        for move in moves:
            check(move, force, there.state(move.group).members)
        return moves

    def commit(self, moves: Sequence[Move]) -> None:
        """Commit every move on its destination (all checked, none refused)."""
        assert not any(move.refused for move in moves)
        for move in moves:
            there = self.adapter.groups(self.configs[move.destination])
            there.commit(move.group, move.offsets)
            move.committed = True

    def show(
        self, groups: Sequence[str], origin: str | None = None, destination: str | None = None
    ) -> list[Move]:
        """`topo offsets`: the groups' translations from `origin` (else every cluster where
        they have offsets) to `destination` (else every other cluster), committing nothing.

        A cluster that does not answer is an error (TopoError), as in `topo plan`, never "no
        offsets": only an origin named together with a destination may be down (its flow's
        checkpoints on the destination stand in for it)."""
        names = sorted(self.topology.clusters)
        origins = [origin] if origin else names
        destinations = [destination] if destination else names
        self.need(*destinations, *(name for name in origins if not (origin and destination)))
        found: list[Move] = []
        for here in origins:
            for there in destinations:
                if here == there:
                    continue
                wanted = groups if here in self.down else self.clusters[here].groups
                moves = self.moves([g for g in groups if g in wanted], here, there)
                found += [move for move in moves if move.rows]
        return found

    def groups_on(self, cluster: str, destination: str) -> list[str]:
        """The groups with offsets on `cluster` that the flows between it and `destination`
        admit (each flow's groups include/exclude)."""
        edges = [e for e in self.topology.edges() if {e.source, e.target} == {cluster, destination}]
        if cluster in self.down:
            found = self._checkpoints(cluster, destination)
            return sorted({c.group for c in found.values()})
        groups = self.clusters[cluster].groups
        return sorted(
            name
            for name, group in groups.items()
            if group.offsets and any(e.settings.groups.admits(name) for e in edges)
        )

    def moves(
        self, groups: Iterable[str], origin: str, destination: str, priced: bool = False
    ) -> list[Move]:
        """The groups' translations from `origin` to `destination`; `priced`: with what each
        partition leaves behind on a live origin (`Move.behind`)."""
        self.need(destination)
        here = self.clusters[destination].groups
        if origin in self.down:
            self.report(
                f"{origin} cannot be reached; using the checkpoints its flow to {destination} wrote"
            )
            written = list(self._checkpoints(origin, destination).values())
            found = [self._from_checkpoints(g, origin, destination, written, here) for g in groups]
            return self._beside_mm2s(found, origin, destination)
        translator = Translator(self.topology, self.clusters, self.configs, self.adapter)
        try:
            moves = []
            for group in groups:
                committed = self._committed(origin, group)
                rows = translator.translate(group, origin, destination, committed)
                current = dict(here[group].offsets) if group in here else {}
                moves.append(Move(group, origin, destination, "live", rows, current))
            if priced:
                self._price(translator, moves)
        finally:
            translator.close()
        return self._beside_mm2s(moves, origin, destination)

    def _price(self, translator: Translator, moves: list[Move]) -> None:
        """Each row's `Behind`, where one flow copies its partition from the origin to the
        destination (a chain of flows, or a failback, is not priced: `not_copied` null)."""
        asked: dict[tuple[str, int], Behind] = {}
        now_ms = int(self.clock() * 1000)
        for move in moves:
            for row in move.rows:
                key = (row.topic, row.partition)
                linked = translator.route(move.origin, row.topic, move.destination)
                if not isinstance(linked, Route) or len(linked.forward) != 1 or linked.backward:
                    continue
                if key not in asked:
                    reader = translator.reader(move.origin).reader
                    start, end = reader.bounds(row.topic, row.partition)
                    hop = linked.forward[0]
                    done = translator.progress(hop).get((hop.source_topic, row.partition))
                    first = start if done is None else max(done, start)
                    oldest = None
                    if end > first:
                        oldest = reader.timestamp(row.topic, row.partition, first)
                    asked[key] = behind(end, done, start, oldest, now_ms)
                move.behind[key] = asked[key]

    def _beside_mm2s(self, moves: list[Move], origin: str, destination: str) -> list[Move]:
        """`moves` with MM2's answer beside topo's: the newest checkpoint in MM2's format for
        each row, where a flow from `origin` to `destination` has MM2's checkpoints topic."""
        edge = next(
            (e for e in self.topology.edges() if (e.source, e.target) == (origin, destination)),
            None,
        )
        if edge is None or not any(move.rows for move in moves):
            return moves
        topic = checkpoints_topic(origin, edge.settings.separator, edge.settings.internal_separator)
        found = self.adapter.read_mm2_checkpoints(self.configs[destination], topic)
        for move in moves:
            move.rows = [
                replace(row, mm2_checkpoint=written.downstream_offset)
                if (written := found.get((row.group, row.destination_topic or "", row.partition)))
                else row
                for row in move.rows
            ]
        return moves

    def _committed(self, cluster: str, group: str) -> dict[tuple[str, int], int]:
        found = self.clusters[cluster].groups.get(group)
        return dict(found.offsets) if found is not None else {}

    @staticmethod
    def _from_checkpoints(
        group: str,
        origin: str,
        destination: str,
        written: list[checkpoints.Checkpoint],
        here: Mapping[str, observed.Group],
    ) -> Move:
        rows = []
        for c in written:
            if c.group == group:
                rows.append(
                    Translation(
                        group,
                        origin,
                        c.topic,
                        c.partition,
                        c.upstream_offset,
                        destination,
                        c.target_topic,
                        c.downstream_offset,
                        c.exact,
                        c.complete,
                        f"checkpoint of {_age(c.at_ms)}",
                        rereads=0 if c.exact else None,
                    )
                )
        current = dict(here[group].offsets) if group in here else {}
        return Move(group, origin, destination, "checkpoints", rows, current)

    def _checkpoints(
        self, origin: str, destination: str
    ) -> dict[tuple[str, str, int], checkpoints.Checkpoint]:
        edge = next(
            (e for e in self.topology.edges() if (e.source, e.target) == (origin, destination)),
            None,
        )
        if edge is None:
            raise TopoError(
                f"{origin} cannot be reached and no flow from {origin} to {destination} writes "
                f"checkpoints there: {self.down.get(origin, '')}"
            )
        # topo's own topic, over the JSON checkpoints topo wrote to MM2's topic before it used
        # MM2's format (a group idle since then has only those)
        config, separator = self.configs[destination], edge.settings.separator
        mm2_topic = checkpoints_topic(origin, separator, edge.settings.internal_separator)
        older = self.adapter.read_checkpoints(config, mm2_topic)
        newer = self.adapter.read_checkpoints(config, topo_checkpoints_topic(origin, separator))
        return {**older, **newer}


def check(move: Move, force: bool, active_members: int) -> None:
    """Why `move` must not be committed, added to `move.refused`."""
    if active_members:
        move.refused.append(
            f"group {move.group} has {active_members} active member(s) on {move.destination}; "
            "stop its consumers there first (topo never overrides a live group)"
        )
    if not move.rows:
        move.refused.append(
            f"group {move.group} has no committed offsets on {move.origin} for topics the "
            f"topology links with {move.destination}"
        )
    for row in move.rows:
        if row.destination_topic is None:  # copied without source offsets
            move.refused.append(f"{row.topic} [{row.partition}]: {row.note}")
        elif not force and (row.position is None or not row.replicated):
            move.refused.append(
                f"{row.topic} [{row.partition}] at {row.offset} on {move.origin} is not "
                f"replicated to {move.destination} far enough ({row.note}); wait for the flow, or "
                "pass --force to accept re-reading what arrives later"
            )


def _age(at_ms: int) -> str:
    seconds = max(0, int(time.time() - at_ms / 1000))
    return f"{seconds}s ago" if seconds < 120 else f"{seconds // 60} min ago"
