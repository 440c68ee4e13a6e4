"""When the running driver asks a source cluster where its partitions end, and which end it then
measures a flow's lag to. Pure: the looks' times and answers in; the partitions to ask and the
lags out.

A flow's copy reports each partition's end as its consumer knows it: Kafka sends the end with
every fetch, so those ends cost nothing and stay fresh while the copy runs. A copy that hangs
stops reporting, though, and its ends stop moving while the source's grow: an end reported is
not proof of an end reached. So the source is asked too, but seldom. Every partition once a
minute (`WHOLE_EVERY`: a hung copy's lag shows within it), and at the looks in between only the
partitions that neither a report nor a look has given an end for yet (a topic or partition that
just joined). For each partition the newer of the two ends counts: a report after the look, or
the look after the last report.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

WHOLE_EVERY = 60.0  # seconds between looks at every partition a source's flows read

Partition = tuple[str, int]


# The ends a flow's copy reported, each with when (monotonic seconds): partition -> (at, end).
Reported = Mapping[Partition, tuple[float, int]]


@dataclass
class LagLook:
    """One source cluster's looks: what it answered, for which partitions, and when the next
    look at all of them is due."""

    whole_every: float = WHOLE_EVERY
    asked: dict[Partition, tuple[float, int]] = field(default_factory=dict)  # -> (at, end)
    due: float = float("-inf")  # the next whole look

    def wanted(
        self, now: float, read: Iterable[Partition], reported: Iterable[Reported]
    ) -> tuple[set[Partition], bool]:
        """The partitions to ask about now, and whether that is the whole look."""
        partitions = set(read)
        if now >= self.due:
            return partitions, True
        known = set(self.asked)
        for report in reported:
            known.update(report)
        return partitions - known, False

    def answered(
        self, now: float, asked: Iterable[Partition], ends: Mapping[Partition, int], whole: bool
    ) -> None:
        """The source's answer to a look at `asked`: a partition it left out no longer exists.
        (A look not answered is not recorded: the next one asks again.)"""
        for partition in asked:
            if partition in ends:
                self.asked[partition] = (now, ends[partition])
            else:
                self.asked.pop(partition, None)
        if whole:
            self.due = now + self.whole_every
            for partition in set(self.asked) - set(asked):
                del self.asked[partition]  # no flow reads it any more

    def lag(self, read: Mapping[Partition, int], reported: Reported | None) -> dict[str, int]:
        """A flow's lag per topic from its read positions: each partition's newer end."""
        ends: dict[Partition, int] = {}
        for partition in read:
            looked = self.asked.get(partition)
            told = None if reported is None else reported.get(partition)
            if told is not None and (looked is None or told[0] >= looked[0]):
                ends[partition] = told[1]
            elif looked is not None:
                ends[partition] = looked[1]
        return lag_to_ends(read, ends)


def lag_to_ends(
    read: Mapping[tuple[str, int], int], ends: Mapping[tuple[str, int], int]
) -> dict[str, int]:
    """Records waiting per source topic: each partition's end (the newest known) minus
    the flow's read position in it (`processed`). A partition whose end is not known is left
    out; so is a topic none of whose ends is known (its lag is unknown, not 0)."""
    found: dict[str, int] = {}
    for (topic, partition), position in read.items():
        end = ends.get((topic, partition))
        if end is not None:
            found[topic] = found.get(topic, 0) + max(0, end - position)
    return found
