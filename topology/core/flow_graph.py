"""The replication graph: clusters as nodes, flows expanded into directed edges.

A thin domain wrapper over networkx. Building it reports the structural problems (unknown
clusters, self-loops, duplicate edges, identity loops without provenance); what names travel
along the edges is worked out in `topology.core.reach`.
"""

import difflib
from collections import Counter
from dataclasses import dataclass, replace

import networkx as nx

from topology.core.budget import Steps
from topology.core.diagnostics import Diagnostic, error
from topology.core.model import Edge, Flow, FlowKind, Naming, Topology


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


def build(topology: Topology, steps: Steps | None = None) -> tuple[TopologyGraph, list[Diagnostic]]:
    """The graph of the topology's valid edges, and what is wrong with the others.

    Each edge is a step of `steps`: an active-active flow of n clusters is n * (n - 1) edges,
    so a file of a few KB can ask for millions. Past the budget no edge is built and T310 says
    which flow asked for most (the graph has its clusters only; the file is invalid anyway).
    """
    steps = Steps.default() if steps is None else steps
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(topology.clusters)
    diagnostics: list[Diagnostic] = []
    flows = [_among(flow, topology) for flow in topology.flows]
    wanted = [_edge_count(flow) for flow in flows]
    too_many = not steps.take(sum(wanted))
    if too_many:
        biggest = max(range(len(flows)), key=wanted.__getitem__)
        flow = topology.flows[biggest]
        diagnostics.append(
            error(
                "T310",
                f"the flows expand to {sum(wanted):,} replication edges, more than the "
                f"analysis can follow for a file of this size ({steps.budget:,} steps); "
                f"flows[{flow.index}] ({_short(flow)}) alone is {wanted[biggest]:,}: split "
                "the mesh into smaller ones joined by mirrors, or aggregate into hubs",
                flow.span,
            )
        )
    unknown = _UnknownClusters(topology)
    for flow, known in zip(topology.flows, flows, strict=True):
        diagnostics += unknown.of(flow)
        diagnostics += _repeated_members(flow)
        if too_many:
            continue
        for edge in known.edges():
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


def _among(flow: Flow, topology: Topology) -> Flow:
    """The flow with its clusters that exist: an edge to an unknown cluster is never built (an
    active-active of 2,000 misspelt names would otherwise expand to 4,000,000 edges first)."""
    known = topology.clusters
    if all(name in known for name in (*flow.sources, *flow.targets)):
        return flow
    sources = tuple(name for name in flow.sources if name in known)
    targets = tuple(name for name in flow.targets if name in known)
    return replace(flow, sources=sources, targets=targets)


def _edge_count(flow: Flow) -> int:
    if flow.kind is FlowKind.ACTIVE_ACTIVE:
        return len(flow.sources) * max(len(flow.targets) - 1, 0)
    return len(flow.sources) * len(flow.targets)


def _short(flow: Flow) -> str:
    """The flow's name, cut for a mesh of hundreds of clusters."""
    name = flow.name
    return name if len(name) <= 60 else f"{flow.kind} of {len(set(flow.sources))} clusters"


# An unknown cluster's message lists at most this many clusters, and at most this many unknown
# names in the file get a "did you mean" (a flow of 10,000 misspelt names among 1,000 clusters
# would otherwise compare 10,000,000 pairs of names and print 10,000 lists of 1,000; 20,000
# flows with one each took a second).
_LISTED = 20
_SUGGESTED = 100


class _UnknownClusters:
    """T201 for each flow, with what the messages share worked out once for the file."""

    def __init__(self, topology: Topology) -> None:
        self.clusters = topology.clusters
        self.known = list(topology.clusters)
        more = len(self.known) - _LISTED
        self.listed = ", ".join(self.known[:_LISTED]) + (f" and {more} more" if more > 0 else "")
        self.suggested = 0

    def of(self, flow: Flow) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        for name in dict.fromkeys((*flow.sources, *flow.targets)):
            if name in self.clusters:
                continue
            # Suggestions cost a comparison with every cluster: only the first few get one.
            close: list[str] = []
            if self.suggested < _SUGGESTED:
                self.suggested += 1
                close = difflib.get_close_matches(name, self.known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; clusters are: {self.listed}"
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
    counts = Counter(flow.sources)
    repeated = sorted(name for name, count in counts.items() if count > 1)
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
