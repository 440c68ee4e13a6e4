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
    earliest, latest = upstream_window(offset, first_at, last_before)
    if latest is not None:
        return latest
    return earliest if earliest is not None else start


def upstream_window(
    offset: int, first_at: Probe, last_before: BackProbe
) -> tuple[int | None, int | None]:
    """The upstream positions consistent with `offset` here, as far as the copies tell: no
    earlier than just after the last copy the group consumed, no later than the first copy it
    had not. Either bound is None when no copy is on that side."""
    found = first_at(offset)
    before = last_before(offset)
    return (None if before is None else before[1] + 1), (None if found is None else found[1])


def merged_position(
    downstream: tuple[int, int], upstream: tuple[int | None, int | None]
) -> tuple[int, int]:
    """For a partition both clusters write (identity-named active-active): one position that
    suits the origin's copies (`downstream`: from its earliest to its latest exact position)
    and the destination's own records (`upstream`: `upstream_window` of their copies on the
    origin). Returns (position, at most how many consumed records it reads again): 0 when the
    two windows meet; otherwise the latest position that loses nothing."""
    low = max(downstream[0], upstream[0] if upstream[0] is not None else downstream[0])
    high = min(downstream[1], upstream[1] if upstream[1] is not None else downstream[1])
    if low <= high:
        return low, 0
    return high, low - high
