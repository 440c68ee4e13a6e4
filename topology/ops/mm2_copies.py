"""Where MirrorMaker 2's copies came from: the stamps they lack, read from MM2's offset-syncs.

A flow that took over from MM2 (`start: mm2`) leaves on its target the copies MM2 made before
the handover, then topo's. topo's carry their source offsets (the `topo-offsets` header);
MM2's carry none. MM2 records instead, now and then, an offset-sync: (offset on the source,
offset of its copy on the target). It means to write one for the first record it copies after
it starts, one whenever the source offsets it copies skip (a transaction marker, an aborted
record, a record compacted away), and one at least every `offset.lag.max` (100) copies; but a
sync waiting to be sent is replaced by the next, so the one after a skip may be a later
record's. What is known, then, between two consecutive syncs (u1, d1) and (u2, d2):

- d2 - d1 == u2 - u1: the copies d1 .. d2-1 are of u1 .. u2-1, one for one (a skip would have
  left fewer copies than offsets; MM2 replays only after a restart, which it syncs);
- otherwise, the copies d1+1 .. d2-1 are of the records MM2 read between u1 and u2, in order,
  whichever they were: `Unsure`. Reading the source there (read_committed, as MM2 reads when
  topo exported its configuration) and the copies' offsets on the target (a transaction
  marker there is no copy) settles it when there are as many records as copies; when there
  are not (a replay after a crash, a topic compacted since MM2 copied it, MM2 reading
  uncommitted records), only the syncs themselves are known.

topo's first copy after MM2's last sync closes the last stretch like a sync: its stamp is as
sure (not MM2's committed position, which `topo export mm2 --positions` may have rewritten).
Where topo has copied nothing there yet, MM2's committed position and the partition's end
bound an `Unsure` tail (`Tail`).

`Mm2Copies` gives a partition reader (topology/ops/ports.py) those stamps, so the exact search
of topology/core/offsets/search.py runs across MM2's copies and topo's alike. Where MM2's copies do
not tell, the search sees no stamp, as with records of another origin, and errs on the side of
reading records again (docs/offsets.md says where).

No I/O of its own: the syncs are read elsewhere; the readers are injected.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from topology.ops.ports import ReaderLike


@dataclass(frozen=True)
class Stretch:
    """Copies at target offsets `start` .. `end`-1 of the source offsets from `upstream` on."""

    start: int
    end: int
    upstream: int

    def at(self, offset: int) -> int:
        return self.upstream + offset - self.start


@dataclass(frozen=True)
class Unsure:
    """Copies at target offsets `start` .. `end`-1 of the records MM2 read after source offset
    `after` and before `before`, in order, however many the source held there."""

    start: int
    end: int
    after: int
    before: int


Known = Stretch | Unsure
MARKERS_RUN = 16  # offsets looked past a transaction marker for the record after it


@dataclass(frozen=True)
class Tail:
    """What follows MM2's last sync. `copied`: topo's first copy after it, at target offset
    `start`, of source offset `upstream` (its stamp: as sure as a sync). Otherwise the
    partition's end (`start`) and MM2's committed position (`upstream`): every copy before the
    end is of a record before that position (MM2 stopped cleanly before topo took over)."""

    start: int
    upstream: int
    copied: bool


def stretches(syncs: Sequence[tuple[int, int]], tail: Tail | None = None) -> list[Known]:
    """What one partition's MM2 copies tell, in target order, from its offset-syncs as (source
    offset, target offset) in the order MM2 wrote them, closed by `tail` when known."""
    pairs = set(syncs) | ({(tail.upstream, tail.start)} if tail and tail.copied else set())
    points = sorted(pairs, key=lambda p: p[1])
    found: list[Known] = []
    for number, (upstream, downstream) in enumerate(points):
        if number > 0 and downstream == points[number - 1][1]:
            continue  # two source offsets for one copy: MM2's replay; the first one stands
        end, unsure = downstream + 1, None
        if number + 1 < len(points):
            next_up, next_down = points[number + 1]
            if next_down - downstream == next_up - upstream > 0:
                end = next_down  # one for one up to the next sync
            elif next_down - downstream > 1 and next_up > upstream:
                unsure = Unsure(downstream + 1, next_down, upstream, next_up)
        elif tail and not tail.copied and tail.start - downstream > 1 < tail.upstream - upstream:
            unsure = Unsure(downstream + 1, tail.start, upstream, tail.upstream)
        last_one = found[-1] if found else None
        if (
            isinstance(last_one, Stretch)
            and last_one.end == downstream
            and (last_one.at(downstream) == upstream)
        ):
            found[-1] = Stretch(last_one.start, end, last_one.upstream)
        else:
            found.append(Stretch(downstream, end, upstream))
        if unsure is not None:
            found.append(unsure)
    return found


def settled(read: Sequence[int], copies: Sequence[int]) -> list[Stretch]:
    """An unsure stretch's stretches, once known: the source offsets of the records MM2 read
    there (`read`, in order) and the target offsets of its copies (`copies`: a transaction
    marker on the target has none), matched one for one; [] when there are not as many."""
    if len(read) != len(copies):
        return []
    found: list[Stretch] = []
    for upstream, target in zip(read, copies, strict=True):
        if found and found[-1].end == target and found[-1].at(target) == upstream:
            found[-1] = Stretch(found[-1].start, target + 1, found[-1].upstream)
        else:
            found.append(Stretch(target, target + 1, upstream))
    return found


# What MM2's copies of (topic, partition) on the reader's cluster from a cluster tell; [] if none.
Lookup = Callable[[str, int, str], list[Known]]
# The source offsets of the records in (topic, partition) on a cluster from `after`+1 to `before`
Settle = Callable[[str, int, str, Unsure], list[Stretch]]


class Mm2Copies:
    """A partition reader whose probes also see MM2's copies, as `lookup` tells them; an
    `Unsure` stretch a probe meets is settled (`settle`) once."""

    def __init__(self, reader: ReaderLike, lookup: Lookup, settle: Settle) -> None:
        self.reader = reader
        self.lookup = lookup
        self.settle = settle
        self._known: dict[tuple[str, int, str], list[Known]] = {}

    def close(self) -> None:
        self.reader.close()

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        return self.reader.bounds(topic, partition)

    def offsets(self, topic: str, partition: int, start: int, end: int) -> list[int]:
        return self.reader.offsets(topic, partition, start, end)

    def _stretch(
        self, topic: str, partition: int, cluster: str, pick: Callable[[list[Known]], int | None]
    ) -> Stretch | None:
        """The stretch `pick` chooses (by its index), settling the unsure ones it meets."""
        key = (topic, partition, cluster)
        if key not in self._known:
            self._known[key] = list(self.lookup(topic, partition, cluster))
        known = self._known[key]
        while (index := pick(known)) is not None:
            chosen = known[index]
            if isinstance(chosen, Stretch):
                return chosen
            known[index : index + 1] = self.settle(topic, partition, cluster, chosen)
        return None

    def told(self, topic: str, partition: int, cluster: str, offset: int) -> bool:
        """Whether the record at `offset` is a copy from `cluster` whose offset there is known:
        one of MM2's that its syncs (or the source's records) tell, or one of topo's."""
        stretch = self._stretch(
            topic,
            partition,
            cluster,
            lambda known: next((i for i, s in enumerate(known) if s.end > offset), None),
        )
        if stretch is not None and stretch.start <= offset:
            return True
        if self.reader.first_stamped(topic, partition, offset, cluster, offset + 1) is not None:
            return True
        if self.reader.offsets(topic, partition, offset, offset + 1):
            return False  # a record here, whose source offset is not known
        # no record at `offset` (a transaction marker): the group reads the next one first
        following = self.reader.offsets(topic, partition, offset + 1, offset + 1 + MARKERS_RUN)
        return bool(following) and self.told(topic, partition, cluster, following[0])

    def first_stamped(
        self, topic: str, partition: int, offset: int, cluster: str, before: int | None = None
    ) -> tuple[int, int] | None:
        stretch = self._stretch(
            topic,
            partition,
            cluster,
            lambda known: next((i for i, s in enumerate(known) if s.end > offset), None),
        )
        if stretch is None:
            return self.reader.first_stamped(topic, partition, offset, cluster, before)
        if stretch.start <= offset:
            return None if before is not None and before <= offset else (offset, stretch.at(offset))
        # topo's copies before MM2's next one, if any (a handover back and forth)
        limit = stretch.start if before is None else min(before, stretch.start)
        found = self.reader.first_stamped(topic, partition, offset, cluster, limit)
        if found is not None or (before is not None and before <= stretch.start):
            return found
        return stretch.start, stretch.upstream

    def last_stamped_before(
        self, topic: str, partition: int, offset: int, cluster: str, after: int | None = None
    ) -> tuple[int, int] | None:
        stretch = self._stretch(
            topic,
            partition,
            cluster,
            lambda known: next(
                (i for i in range(len(known) - 1, -1, -1) if known[i].start < offset), None
            ),
        )
        if stretch is None:
            return self.reader.last_stamped_before(topic, partition, offset, cluster, after)
        if offset <= stretch.end:
            if after is not None and after >= offset - 1:
                return None
            return offset - 1, stretch.at(offset - 1)
        mine = stretch.end - 1
        limit = mine if after is None else max(after, mine)
        found = self.reader.last_stamped_before(topic, partition, offset, cluster, limit)
        if found is not None or (after is not None and after >= mine):
            return found
        return mine, stretch.at(mine)
