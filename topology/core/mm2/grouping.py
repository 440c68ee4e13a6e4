"""Enabled MM2 flows (`A->B.enabled=true`) -> topo flows: active-active, aggregate, mirror.

MM2 only knows one-way flows; topo can say more, and an import uses that only where the meaning
is exactly the same:

- Clusters whose every ordered pair is enabled with equal effective settings become one
  `active-active` list (a pair, or a full mesh of 3+, largest mesh first).
- Under identity naming, flows into a cluster that more than one identity flow feeds merge
  same-named topics there: that is what MM2 does, and topo wants the merge declared, so they
  become `aggregate` flows (one per group of equal settings).
- Under prefix naming a fan-in keeps its mirrors: every source's topics arrive under their own
  prefix, nothing merges, and separate mirrors keep each flow's settings visible.
- Everything else is a `mirror`.
"""

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from topology.core.mm2.vocabulary import SETTING_PATHS, SettingPath

Settings = Mapping[SettingPath, Any]


@dataclass(frozen=True)
class Edge:
    """One enabled MM2 flow."""

    source: str
    target: str
    settings: Settings  # effective: every setting path has a value
    overrides: Settings  # what differs from the topology's defaults
    order: int  # the line of `source->target.enabled`, so flows keep the file's order

    @property
    def identity(self) -> bool:
        return bool(self.settings[("naming",)] == "identity")

    @property
    def key(self) -> tuple[Any, ...]:
        """Edges that may share a flow have equal keys: every setting, the client settings by
        role (paths beyond SETTING_PATHS) included."""
        roles = tuple(sorted((p, v) for p, v in self.settings.items() if p not in SETTING_PATHS))
        return (*(self.settings[path] for path in SETTING_PATHS), roles)


@dataclass(frozen=True)
class FlowPlan:
    kind: str  # "mirror", "active-active" or "aggregate"
    sources: tuple[str, ...]  # for active-active, the members
    target: str | None  # None for active-active
    edges: tuple[Edge, ...]

    @property
    def overrides(self) -> Settings:
        return self.edges[0].overrides

    @property
    def order(self) -> int:
        return min(edge.order for edge in self.edges)

    @property
    def name(self) -> str:
        if self.kind == "active-active":
            return "<->".join(self.sources)
        if self.kind == "aggregate":
            return f"[{', '.join(self.sources)}]->{self.target}"
        return f"{self.sources[0]}->{self.target}"


def group(edges: list[Edge], clusters: list[str]) -> list[FlowPlan]:
    """The topo flows for `edges`, in the order the properties enabled them."""
    remaining = {(edge.source, edge.target): edge for edge in edges}
    plans = _meshes(remaining, clusters)
    for plan in plans:
        for edge in plan.edges:
            del remaining[(edge.source, edge.target)]
    plans += _aggregates(remaining, edges)
    plans += [
        FlowPlan("mirror", (edge.source,), edge.target, (edge,)) for edge in remaining.values()
    ]
    return sorted(plans, key=lambda plan: plan.order)


def _meshes(edges: dict[tuple[str, str], Edge], clusters: list[str]) -> list[FlowPlan]:
    rank = {name: index for index, name in enumerate(clusters)}
    mutual: dict[tuple[Any, ...], nx.Graph[str]] = {}
    for (source, target), edge in edges.items():
        back = edges.get((target, source))
        if back is not None and back.key == edge.key and rank[source] < rank[target]:
            mutual.setdefault(edge.key, nx.Graph()).add_edge(source, target)
    plans = []
    for graph in mutual.values():
        while graph.number_of_edges():
            cliques = [sorted(c, key=rank.__getitem__) for c in nx.find_cliques(graph)]
            best = min(cliques, key=lambda c: (-len(c), [rank[n] for n in c]))
            if len(best) < 2:
                break
            graph.remove_edges_from((a, b) for a in best for b in best if a != b)
            members = tuple(best)
            mesh_edges = tuple(edges[(a, b)] for a in members for b in members if a != b)
            plans.append(FlowPlan("active-active", members, None, mesh_edges))
    return plans


def _aggregates(remaining: dict[tuple[str, str], Edge], edges: list[Edge]) -> list[FlowPlan]:
    identity_feeds: dict[str, int] = defaultdict(int)
    for edge in edges:
        if edge.identity:
            identity_feeds[edge.target] += 1
    groups: dict[tuple[str, tuple[Any, ...]], list[Edge]] = defaultdict(list)
    for key, edge in sorted(remaining.items(), key=lambda item: item[1].order):
        if edge.identity and identity_feeds[edge.target] >= 2:
            groups[(edge.target, edge.key)].append(edge)
            del remaining[key]
    return [
        FlowPlan("aggregate", tuple(e.source for e in members), target, tuple(members))
        for (target, _), members in groups.items()
    ]


def identity_loops(edges: list[tuple[str, str, bool]]) -> list[list[str]]:
    """Groups of clusters records can circle through along at least one identity edge."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_edges_from((source, target) for source, target, _ in edges)
    loops = []
    for component in nx.strongly_connected_components(graph):
        inside = [e for e in edges if e[0] in component and e[1] in component]
        if len(component) > 1 and any(identity for _, _, identity in inside):
            order = [name for edge in edges for name in edge[:2]]
            loops.append(sorted(component, key=order.index))
    return sorted(loops)
