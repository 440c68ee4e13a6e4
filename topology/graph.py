"""The replication graph: clusters as nodes, flows expanded into directed edges.

A thin domain wrapper over networkx. Building it reports the structural problems (unknown
clusters, self-loops, duplicate edges, identity loops without provenance); what names travel
along the edges is worked out in `topology.reach`.
"""

import difflib
from dataclasses import dataclass

import networkx as nx

from topology.diagnostics import Diagnostic, error
from topology.model import Edge, Flow, FlowKind, Naming, Topology


@dataclass(frozen=True)
class TopologyGraph:
    topology: Topology
    _graph: "nx.DiGraph[str]"

    @property
    def clusters(self) -> list[str]:
        return list(self.topology.clusters)

    def edges(self) -> list[Edge]:
        """Every valid edge once, in flow order."""
        return [data["edge"] for _, _, data in self._graph.edges(data=True)]

    def edges_from(self, cluster: str) -> list[Edge]:
        return [data["edge"] for _, _, data in self._graph.out_edges(cluster, data=True)]

    def edges_into(self, cluster: str) -> list[Edge]:
        return [data["edge"] for _, _, data in self._graph.in_edges(cluster, data=True)]

    def flow(self, edge: Edge) -> Flow:
        return self.topology.flow(edge.flow)

    def path(self, source: str, target: str) -> list[str]:
        return list(nx.shortest_path(self._graph, source, target))

    def reaches(self, source: str) -> set[str]:
        return set(nx.descendants(self._graph, source)) | {source}

    def reached_by(self, target: str) -> set[str]:
        return set(nx.ancestors(self._graph, target)) | {target}


def build(topology: Topology) -> tuple[TopologyGraph, list[Diagnostic]]:
    """The graph of the topology's valid edges, and what is wrong with the others."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(topology.clusters)
    diagnostics: list[Diagnostic] = []
    for flow in topology.flows:
        diagnostics += _unknown_clusters(flow, topology)
        diagnostics += _repeated_members(flow)
        for edge in flow.edges():
            if edge.source not in topology.clusters or edge.target not in topology.clusters:
                continue
            if edge.source == edge.target:
                diagnostics.append(
                    error(
                        "T301",
                        f"flows[{flow.index}] ({flow.name}) replicates {edge.source} to itself",
                        flow.span,
                    )
                )
                continue
            if graph.has_edge(edge.source, edge.target):
                first = graph.edges[edge.source, edge.target]["edge"]
                where = (
                    "earlier in the same flow"
                    if first.flow == flow.index
                    else f"by flows[{first.flow}] ({topology.flow(first.flow).name})"
                )
                diagnostics.append(
                    error(
                        "T302",
                        f"flows[{flow.index}] ({flow.name}) repeats {edge.name}, already "
                        f"replicated {where}; "
                        "one pair of clusters takes one flow, so merge their topics filters",
                        flow.span,
                    )
                )
                continue
            graph.add_edge(edge.source, edge.target, edge=edge)
    result = TopologyGraph(topology, graph)
    return result, diagnostics + _unprotected_identity_loops(result)


def _unknown_clusters(flow: Flow, topology: Topology) -> list[Diagnostic]:
    known = list(topology.clusters)
    found = []
    for name in dict.fromkeys((*flow.sources, *flow.targets)):
        if name not in topology.clusters:
            close = difflib.get_close_matches(name, known, n=1)
            hint = (
                f"; did you mean '{close[0]}'?" if close else f"; clusters are: {', '.join(known)}"
            )
            found.append(
                error(
                    "T201",
                    f"flows[{flow.index}] names cluster '{name}', which is not under "
                    f"clusters{hint}",
                    flow.span,
                )
            )
    return found


def _repeated_members(flow: Flow) -> list[Diagnostic]:
    if flow.kind is FlowKind.MIRROR:
        return []
    repeated = sorted({name for name in flow.sources if flow.sources.count(name) > 1})
    what = "active-active" if flow.kind is FlowKind.ACTIVE_ACTIVE else "aggregate from"
    return [
        error(
            "T301",
            f"flows[{flow.index}] lists {name} twice in {what}; a cluster would replicate to "
            "itself",
            flow.span,
        )
        for name in repeated
    ]


def _unprotected_identity_loops(graph: TopologyGraph) -> list[Diagnostic]:
    """A loop with an identity edge is safe only if every edge on it stamps provenance.

    Under prefix naming MM2's rule (never replicate to a cluster in the name's origin chain)
    stops loops by name alone. Under identity naming the name carries no history, so only the
    provenance header does; one edge that drops it lets records circle forever.
    """
    identity = [e for e in graph.edges() if e.settings.naming is Naming.IDENTITY]
    found = []
    for edge in graph.edges():
        if edge.settings.provenance:
            continue
        after, before = graph.reaches(edge.target), graph.reached_by(edge.source)
        for loop_edge in identity:
            if loop_edge.source in after and loop_edge.target in before:
                if loop_edge == edge:
                    cycle = [edge.source, *graph.path(edge.target, edge.source)]
                else:
                    cycle = [edge.source, *graph.path(edge.target, loop_edge.source)]
                    cycle += graph.path(loop_edge.target, edge.source)
                flow = graph.flow(edge)
                found.append(
                    error(
                        "T303",
                        f"records can loop {' -> '.join(cycle)} under identity naming, and "
                        f"flows[{flow.index}] ({flow.name}) sets provenance: false; turn "
                        "provenance on "
                        "or use prefix naming",
                        flow.span,
                    )
                )
                break
    return found
