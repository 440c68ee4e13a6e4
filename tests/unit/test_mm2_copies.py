"""MM2's copies seen through its offset-syncs (topology/ops/mm2_copies.py): which target offsets
they tell exactly, and a reader whose probes see them beside topo's stamped copies."""

from topology.ops.mm2_copies import Known, Mm2Copies, Stretch, Tail, Unsure, settled, stretches


def test_syncs_as_far_apart_on_both_sides_are_one_for_one_between_them() -> None:
    # MM2 synced its first copy, then every 100 (offset.lag.max); topo's first copy follows
    found = stretches([(0, 0), (100, 100), (200, 200)], Tail(251, 251, copied=True))
    assert found == [Stretch(0, 252, 0)]


def test_a_skip_on_the_source_leaves_the_copies_before_it_to_be_settled_by_the_source() -> None:
    # source 4 is a transaction marker: MM2 syncs the record after it, 5 copied at 4
    found = stretches([(0, 0), (5, 4)], Tail(9, 10, copied=True))
    assert found == [Stretch(0, 1, 0), Unsure(1, 4, 0, 5), Stretch(4, 10, 5)]
    last = found[2]
    assert isinstance(last, Stretch)
    assert [last.at(4), last.at(9)] == [5, 10]
    assert settled([1, 2, 3], [1, 2, 3]) == [Stretch(1, 4, 1)]


def test_a_sync_mm2_replaced_is_settled_by_the_records_the_source_holds() -> None:
    # the sync after the skip at 3 was replaced by the next one's, at source 6
    found = stretches([(0, 0), (6, 5)], None)
    assert found == [Stretch(0, 1, 0), Unsure(1, 5, 0, 6), Stretch(5, 6, 6)]
    assert settled([1, 2, 4, 5], [1, 2, 3, 4]) == [Stretch(1, 3, 1), Stretch(3, 5, 4)]
    # compacted since MM2 copied: fewer records than copies, so nothing is told
    assert settled([1, 4, 5], [1, 2, 3, 4]) == []


def test_transaction_markers_on_the_target_have_no_copy_to_match() -> None:
    # MM2 wrote exactly-once: a marker at 3 on the target between its copies of 2 and 4
    assert settled([2, 4, 5], [1, 2, 4]) == [Stretch(1, 2, 2), Stretch(2, 3, 4), Stretch(4, 5, 5)]


def test_the_tail_after_the_last_sync_is_told_by_topos_first_copy_or_left_unsure() -> None:
    assert stretches([(0, 0), (100, 100)], None) == [Stretch(0, 101, 0)]
    # topo's first copy (of 150, at 140): MM2's copies 101..139 were of records 101..149
    found = stretches([(0, 0), (100, 100)], Tail(140, 150, copied=True))
    assert found == [Stretch(0, 101, 0), Unsure(101, 140, 100, 150), Stretch(140, 141, 150)]
    # topo copied nothing here yet: the partition ends at 130, MM2 committed up to 149
    found = stretches([(0, 0), (100, 100)], Tail(130, 150, copied=False))
    assert found == [Stretch(0, 101, 0), Unsure(101, 130, 100, 150)]


def test_a_position_written_by_topo_export_is_not_taken_for_mm2s_last_copy() -> None:
    """MM2 copied 0..14 to 0..14 (synced at 0 only), topo 15..21 to 15..21, and `topo export
    mm2 --positions` wrote 22 as MM2's position: the copy at 14 is still of 14."""
    found = stretches([(0, 0)], Tail(15, 15, copied=True))
    assert found == [Stretch(0, 16, 0)]


def test_a_replay_after_a_crash_is_not_one_for_one() -> None:
    # MM2 copied to source 50 (target 50), crashed, and started again from source 40
    found = stretches([(0, 0), (40, 51)], Tail(72, 61, copied=True))
    assert found == [Stretch(0, 1, 0), Unsure(1, 51, 0, 40), Stretch(51, 73, 40)]
    assert settled(list(range(1, 40)), list(range(1, 51))) == []  # 39 records, 50 copies


class Reader:
    """Stamps as topo's copies carry them: target offset -> source offset, east only."""

    def __init__(self, stamped: dict[int, int], end: int) -> None:
        self.stamped = stamped
        self.end = end
        self.reads: list[tuple[int, int | None]] = []

    def close(self) -> None:
        pass

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        return 0, self.end

    def first_stamped(
        self, topic: str, partition: int, offset: int, cluster: str, before: int | None = None
    ) -> tuple[int, int] | None:
        self.reads.append((offset, before))
        found = [o for o in self.stamped if o >= offset and (before is None or o < before)]
        return (min(found), self.stamped[min(found)]) if found else None

    def last_stamped_before(
        self, topic: str, partition: int, offset: int, cluster: str, after: int | None = None
    ) -> tuple[int, int] | None:
        found = [o for o in self.stamped if o < offset and (after is None or o > after)]
        return (max(found), self.stamped[max(found)]) if found else None

    def offsets(self, topic: str, partition: int, start: int, end: int) -> list[int]:
        return list(range(max(start, 0), min(end, self.end)))  # no markers here

    def timestamp(self, topic: str, partition: int, offset: int) -> int | None:
        return None  # no translation here reads a time


def _copies(inner: Reader, mm2: list[Known], source: list[int] | None = None) -> Mm2Copies:
    """`inner` with MM2's copies as `mm2` tells them; an unsure stretch is settled from
    `source`, the offsets of the source's records."""
    settles: list[Unsure] = []

    def settle(topic: str, partition: int, cluster: str, unsure: Unsure) -> list[Stretch]:
        assert unsure not in settles, "settled twice"
        settles.append(unsure)
        read = [o for o in source or [] if unsure.after < o < unsure.before]
        return settled(read, list(range(unsure.start, unsure.end)))

    return Mm2Copies(inner, lambda topic, partition, cluster: list(mm2), settle)


def _reader() -> tuple[Reader, Mm2Copies]:
    """MM2 copied source 0..3 and 5..6 at 0..5 (4 a marker), topo 7, 8, 10 at 6, 7, 8."""
    inner = Reader({6: 7, 7: 8, 8: 10}, end=9)
    return inner, _copies(inner, [Stretch(0, 4, 0), Stretch(4, 6, 5)])


def test_the_reader_sees_mm2s_copies_then_topos() -> None:
    inner, reader = _reader()
    assert reader.first_stamped("t", 0, 2, "east") == (2, 2)
    assert reader.first_stamped("t", 0, 4, "east") == (4, 5)
    assert inner.reads == []  # MM2's copies are told by its syncs: nothing read
    assert reader.first_stamped("t", 0, 6, "east") == (6, 7)
    assert reader.first_stamped("t", 0, 9, "east") is None
    assert reader.last_stamped_before("t", 0, 7, "east") == (6, 7)
    assert reader.last_stamped_before("t", 0, 6, "east") == (5, 6)
    assert reader.last_stamped_before("t", 0, 1, "east") == (0, 0)
    assert reader.last_stamped_before("t", 0, 0, "east") is None


def test_an_unsure_stretch_is_settled_from_the_source_once_a_probe_meets_it() -> None:
    inner = Reader({}, end=6)
    # MM2's copies 0..5 of source 0..6 (3 a marker), synced at 0 and 6 only
    reader = _copies(inner, stretches([(0, 0), (6, 5)], None), source=[0, 1, 2, 4, 5, 6])
    assert reader.first_stamped("t", 0, 3, "east") == (3, 4)
    assert reader.last_stamped_before("t", 0, 3, "east") == (2, 2)
    assert reader.first_stamped("t", 0, 5, "east") == (5, 6)
    unsettled = _copies(inner, stretches([(0, 0), (6, 5)], None), source=[0, 4, 5, 6])
    assert unsettled.first_stamped("t", 0, 2, "east") == (5, 6)  # only the syncs are known
    assert unsettled.last_stamped_before("t", 0, 5, "east") == (0, 0)


def test_between_two_stretches_only_whats_between_them_is_read() -> None:
    inner = Reader({}, end=20)
    reader = _copies(inner, [Stretch(0, 4, 0), Stretch(10, 12, 20)])
    assert reader.first_stamped("t", 0, 5, "east") == (10, 20)
    assert inner.reads == [(5, 10)]
    assert reader.last_stamped_before("t", 0, 8, "east") == (3, 3)
    assert reader.first_stamped("t", 0, 5, "east", before=8) is None
