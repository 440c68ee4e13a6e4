"""Exact offset translation over one partition, given a way to look at its records.

Copies keep their source partition, and within a partition the job writes them in source
order, so along a target partition the source offsets its copies carry only grow (records of
other origins may sit between them). Two questions, each answered from those stamps:

- `downstream_position`: where on the target a group resumes that had committed `offset` on
  the source, i.e. just after the last copy of a record it had consumed. Binary search: each
  probe looks at the first stamped copy at or after a target offset.
- `upstream_position`: the reverse, for failback: the copies on this cluster carry their
  offsets on the cluster they came from; the first copy the group had not consumed names the
  offset it resumes at there.

Pure: the probes do the reading.
"""

from collections.abc import Callable

# The first copy at or after a target offset that carries a stamp of the cluster asked about:
# (its target offset, its offset on that cluster), or None when there is none up to the end.
Probe = Callable[[int], tuple[int, int] | None]
# The last such copy before a target offset, or None when there is none back to the start.
BackProbe = Callable[[int], tuple[int, int] | None]


def downstream_position(low: int, high: int, offset: int, first_at: Probe) -> int:
    """The smallest target offset in [low, high] after which every copy carries a source
    offset >= `offset` (its committed offset on the source), found in O(log n) probes.

    Records of `offset` and later are all at or after it; none before it is. This relies on
    the copies' source offsets growing along the partition. An at-least-once replay after a
    crash breaks that for the replayed stretch: a group whose offset falls inside it may read
    part of the stretch again (never less than everything it had not committed)."""
    while low < high:
        middle = (low + high) // 2
        found = first_at(middle)
        if found is None or found[1] >= offset:
            high = middle
        else:
            low = found[0] + 1  # that copy and everything before it were consumed
    return low


def upstream_position(
    offset: int, first_at: Probe, last_before: BackProbe, start: int | None
) -> int | None:
    """The offset on the upstream cluster a group resumes at, from its `offset` here.

    The first copy at or after `offset` is the first record the group had not consumed: its
    upstream offset is the answer. When the group consumed every copy, it resumes just after
    the last one it read. None when this partition holds no copies from upstream at all; then
    the group resumes at `start`, where the copy began reading upstream, if known."""
    found = first_at(offset)
    if found is not None:
        return found[1]
    before = last_before(offset)
    if before is not None:
        return before[1] + 1
    return start
