"""Topics deleted and made again under a running copy, told by their topic ids (Kafka gives a
topic a new id each time it is made). Pure: the driver's telemetry thread hands in the ids it
read on each side (`spark/cluster_looks.py`) and reports the losses found (`progress.Loss`, kinds
`recreated` on the source and `target` on the target).

Which topics it asks a cluster about, and when, is `IdLook`'s: asking is the costly part (a
description of every topic of every flow, each with its partitions). A topic is asked
about as soon as it is wanted and its id is not known (a topic that just joined a flow, or one
missing at its last look: deleted, and perhaps being made again), and otherwise once every
`EVERY` seconds; the ids of topics nobody wants any more are forgotten.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from topology.core.progress import Loss

EVERY = 30.0  # seconds between looks at a topic whose id is known


@dataclass
class IdLook:
    """One cluster's looks at its topics' ids: when each known topic was last asked about."""

    every: float = EVERY
    asked: dict[str, float] = field(default_factory=dict)  # topic -> when its id was given

    def wanted(self, now: float, topics: Iterable[str]) -> set[str]:
        """The topics to ask about now: those whose id is not known, or was given `every`
        seconds ago or more."""
        return {t for t in topics if self.asked.get(t, float("-inf")) + self.every <= now}

    def answered(self, now: float, asked: Iterable[str], ids: Mapping[str, str]) -> None:
        """The cluster's answer to a look at `asked`: a topic it left out does not exist now,
        and is asked about again at the next look. (A look not answered is not recorded: the
        next one asks again.)"""
        for topic in asked:
            if topic in ids:
                self.asked[topic] = now
            else:
                self.asked.pop(topic, None)

    def forget(self, wanted: Iterable[str]) -> None:
        """Only the topics still `wanted` are kept."""
        keep = set(wanted)
        for topic in set(self.asked) - keep:
            del self.asked[topic]


class IdWatch:
    """One flow's topics' ids as last seen, on its source and on its target."""

    def __init__(self) -> None:
        self.source: dict[str, str] = {}
        self.target: dict[str, str] = {}

    def look(self, source: Mapping[str, str], target: Mapping[str, str]) -> list[Loss]:
        """The topics whose id changed since the last look; a topic not seen (gone, or not
        answered for) keeps the id it had."""
        found = [
            Loss(topic, -1, "recreated", detail=made)
            for topic, made in _changed(self.source, source)
        ]
        found += [
            Loss(topic, -1, "target", detail=made) for topic, made in _changed(self.target, target)
        ]
        return found


def _changed(seen: dict[str, str], now: Mapping[str, str]) -> list[tuple[str, str]]:
    changed = [(t, made) for t, made in sorted(now.items()) if seen.get(t, made) != made]
    seen.update(now)
    return changed
