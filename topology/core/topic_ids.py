"""Topics deleted and made again under a running copy, told by their topic ids (Kafka gives a
topic a new id each time it is made). Pure: the driver's telemetry thread hands in the ids it
read on each side every few seconds (`kafka/topic_ids.py`) and reports the losses found
(`progress.Loss`, kinds `recreated` on the source and `target` on the target)."""

from collections.abc import Mapping

from topology.core.progress import Loss


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
