"""An offline, semantic diff of two topologies, for pull-request review.

Edges, not list positions, are compared: turning two opposite mirrors into one active-active
flow with the same settings is no change at all. Each change says what it does to the clusters:
naming changes are breaking (new topics are created, the old ones are orphaned), filter changes
widen or narrow what is replicated, and the remote topics each cluster gains or stops receiving
are listed. Problems the head introduces (loops, collisions) are part of the diff.
"""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from topology.core import patterns, secrets
from topology.core.analysis import Analysis
from topology.core.model import Cluster, Edge, FlowSettings, Mm2State, NameFilter
from topology.core.reach import Arrival


@dataclass(frozen=True)
class FieldChange:
    field: str
    before: Any
    after: Any
    effect: str  # widened | narrowed | changed | breaking


@dataclass(frozen=True)
class EdgeChange:
    action: str  # add | change | remove
    edge: str  # east->west
    flow: str  # the flow's name in the file the edge is in (head, or base when removed)
    settings: dict[str, Any] = field(default_factory=dict)  # for add and remove
    changes: tuple[FieldChange, ...] = ()

    @property
    def breaking(self) -> bool:
        return any(c.effect == "breaking" for c in self.changes)


@dataclass(frozen=True)
class ClusterChange:
    action: str  # add | change | remove
    cluster: str
    changes: tuple[FieldChange, ...] = ()


@dataclass(frozen=True)
class TopicsChange:
    """Remote topic names a cluster starts or stops receiving."""

    cluster: str
    added: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class TopologyDiff:
    base: str
    head: str
    clusters: tuple[ClusterChange, ...]
    edges: tuple[EdgeChange, ...]
    topics: tuple[TopicsChange, ...]
    problems_introduced: tuple[str, ...]
    problems_resolved: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.clusters or self.edges or self.topics)

    def summary(self) -> dict[str, int]:
        actions = [c.action for c in self.clusters] + [e.action for e in self.edges]
        return {
            "add": actions.count("add"),
            "change": actions.count("change"),
            "remove": actions.count("remove"),
            "breaking": sum(e.breaking for e in self.edges),
            "problems_introduced": len(self.problems_introduced),
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schemas/diff.schema.json) that every renderer reads."""
        data: dict[str, Any] = _plain(
            {
                "format_version": "1",
                "base": self.base,
                "head": self.head,
                "changed": self.changed,
                "summary": self.summary(),
                "clusters": [asdict(c) for c in self.clusters],
                "edges": [{**asdict(e), "breaking": e.breaking} for e in self.edges],
                "topics": [asdict(t) for t in self.topics],
                "problems_introduced": list(self.problems_introduced),
                "problems_resolved": list(self.problems_resolved),
            }
        )
        return data


def _plain(value: Any) -> Any:
    """Tuples become lists, so the dict equals its own JSON round trip."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def diff(base: Analysis, head: Analysis) -> TopologyDiff:
    """Compare two analysed files; both must have resolved to a topology."""
    assert base.topology is not None and head.topology is not None
    assert base.graph is not None and head.graph is not None
    return TopologyDiff(
        base=base.document.file,
        head=head.document.file,
        clusters=tuple(_clusters(base.topology.clusters, head.topology.clusters)),
        edges=tuple(_edges(base, head)),
        topics=tuple(_topics(base, head)),
        problems_introduced=tuple(_problems(head) - _problems(base)),
        problems_resolved=tuple(_problems(base) - _problems(head)),
    )


def _problems(analysis: Analysis) -> set[str]:
    # Positions move with every edit; a problem is the same problem if its words are.
    return {f"{d.severity.value}[{d.code}]: {d.message}" for d in analysis.diagnostics}


# -- clusters ---------------------------------------------------------------------------------


def _clusters(base: Mapping[str, Cluster], head: Mapping[str, Cluster]) -> list[ClusterChange]:
    found = [ClusterChange("add", name) for name in head if name not in base]
    for name in base:
        if name not in head:
            found.append(ClusterChange("remove", name))
        else:
            changes = _field_changes(_cluster_fields(base[name]), _cluster_fields(head[name]))
            if changes:
                found.append(ClusterChange("change", name, tuple(changes)))
    return found


def _cluster_fields(cluster: Cluster) -> dict[str, Any]:
    """What a reviewer may see of a cluster: secrets written inline are masked."""
    security = cluster.security
    fields: dict[str, Any] = {
        "bootstrap": cluster.bootstrap,
        "security.protocol": security.protocol,
        "owned topics": sorted(cluster.topics),
    }
    if security.sasl:
        fields["security.sasl.mechanism"] = security.sasl.mechanism
        fields["security.sasl.username"] = security.sasl.username
        fields["security.sasl.password"] = _masked(security.sasl.password)
    if security.tls:
        for key, value in asdict(security.tls).items():
            fields[f"security.tls.{key}"] = _masked(value) if key == "key_password" else value
    for key, value in cluster.client.items():
        # Any type: `ssl.key.password: 12345` is a secret written as a number.
        fields[f"client.{key}"] = _masked(value) if secrets.is_secret_key(key) else value
    return fields


@dataclass(frozen=True)
class _InlineSecret:
    """A secret written in the file: compared by value, so a changed one is a change, but shown
    only as being there (not even its length, which narrows a guess)."""

    value: Any = field(repr=False)  # never in a traceback or a debug print either

    def __str__(self) -> str:
        return INLINE_SECRET


INLINE_SECRET = "(inline secret)"


def _masked(value: Any) -> Any:
    """References are safe to show; an inline secret shows only that it is there."""
    if not value or (isinstance(value, str) and secrets.reference(value)):
        return value
    return _InlineSecret(value)


def _shown(value: Any) -> Any:
    return INLINE_SECRET if isinstance(value, _InlineSecret) else value


# -- edges ------------------------------------------------------------------------------------


def _edges(base: Analysis, head: Analysis) -> list[EdgeChange]:
    assert base.graph is not None and head.graph is not None
    before = {(e.source, e.target): e for e in base.graph.edges()}
    after = {(e.source, e.target): e for e in head.graph.edges()}
    found = []
    for key, edge in after.items():
        flow = head.graph.flow(edge).name
        if key not in before:
            found.append(EdgeChange("add", edge.name, flow, settings=_settings(edge.settings)))
            continue
        old_settings = _settings(before[key].settings)
        changes = _field_changes(old_settings, _settings(edge.settings))
        changes += _merge_change(before[key], edge)
        if changes:
            found.append(EdgeChange("change", edge.name, flow, changes=tuple(_judged(changes))))
    for key, edge in before.items():
        if key not in after:
            flow = base.graph.flow(edge).name
            found.append(EdgeChange("remove", edge.name, flow, settings=_settings(edge.settings)))
    return found


def _settings(settings: FlowSettings) -> dict[str, Any]:
    return {
        "naming": settings.naming.value,
        "separator": settings.separator,
        "internal_separator": settings.internal_separator,
        "topics": settings.topics.to_dict(),
        "groups": settings.groups.to_dict(),
        "replication_factor": settings.replication_factor,
        "sync": asdict(settings.sync),
        "emit": asdict(settings.emit),
        "configs.exclude": list(settings.config_exclude),
        "delivery": settings.delivery,
        "start": settings.start,
        "filter": settings.filter,
        "provenance": settings.provenance,
        # (where MM2 keeps its state: shown once set, so older diffs read the same)
        **({"mm2": asdict(settings.mm2)} if settings.mm2 != Mm2State() else {}),
    }


def _merge_change(before: Edge, after: Edge) -> list[FieldChange]:
    if before.merges == after.merges:
        return []
    return [FieldChange("merges same-named topics", before.merges, after.merges, "changed")]


def _field_changes(before: dict[str, Any], after: dict[str, Any]) -> list[FieldChange]:
    found = []
    for key in dict.fromkeys((*before, *after)):
        old, new = before.get(key), after.get(key)
        if isinstance(old, dict) and isinstance(new, dict) and key not in ("topics", "groups"):
            nested = _field_changes(old, new)
            found += [FieldChange(f"{key}.{c.field}", c.before, c.after, c.effect) for c in nested]
        elif old != new:
            found.append(FieldChange(key, _shown(old), _shown(new), "changed"))
    return found


def _judged(changes: list[FieldChange]) -> list[FieldChange]:
    """Say what each change does: breaking, widened, narrowed, or just changed."""
    judged = []
    for change in changes:
        effect = change.effect
        if change.field in ("naming", "separator"):
            effect = "breaking"
        elif change.field in ("topics", "groups"):
            effect = _filter_effect(change.before, change.after)
        elif change.field == "filter":
            effect = (
                "narrowed"
                if change.before is None
                else "widened"
                if change.after is None
                else "changed"
            )
        judged.append(FieldChange(change.field, change.before, change.after, effect))
    return judged


def _filter_effect(before: dict[str, list[str]], after: dict[str, list[str]]) -> str:
    old = NameFilter(tuple(before["include"]), tuple(before["exclude"]))
    new = NameFilter(tuple(after["include"]), tuple(after["exclude"]))
    wider = any(not _covers(old, p) for p in new.include) or bool(
        set(old.exclude) - set(new.exclude)
    )
    narrower = any(not _covers(new, p) for p in old.include) or bool(
        set(new.exclude) - set(old.exclude)
    )
    if wider and not narrower:
        return "widened"
    if narrower and not wider:
        return "narrowed"
    return "changed"


def _covers(names: NameFilter, pattern: str) -> bool:
    """Does the filter's include list already take in everything `pattern` does?"""
    if pattern in names.include or ".*" in names.include:
        return True
    literal = patterns.literal(pattern)
    return literal is not None and names.admits(literal)


# -- remote topics ------------------------------------------------------------------------------


def _topics(base: Analysis, head: Analysis) -> list[TopicsChange]:
    assert base.reach is not None and head.reach is not None
    assert base.graph is not None and head.graph is not None
    found = []
    for cluster in dict.fromkeys((*base.graph.clusters, *head.graph.clusters)):
        old_arrivals, new_arrivals = base.reach.on(cluster), head.reach.on(cluster)
        old, new = _names(old_arrivals), _names(new_arrivals)
        # An exact name still admitted by an open-ended family on the other side did not move.
        added = sorted(n for n in new - old if not any(a.admits(n) for a in old_arrivals))
        removed = sorted(n for n in old - new if not any(a.admits(n) for a in new_arrivals))
        if added or removed:
            found.append(TopicsChange(cluster, tuple(added), tuple(removed)))
    return found


def _names(arrivals: list[Arrival]) -> set[str]:
    """Each exact name on its own, so adding one topic shows as one line; patterns as written."""
    found: set[str] = set()
    for arrival in arrivals:
        found |= set(arrival.names) if arrival.names is not None else {arrival.describe()}
    return found
