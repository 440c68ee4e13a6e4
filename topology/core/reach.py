"""Which topic names can appear on each cluster, and by which chain of edges they get there.

Records travel along edges, renamed by each edge's naming policy, until they would reach a
cluster they already visited: MM2's cycle rule for prefix names (the origin chain is in the
name, `west.east.orders`), the provenance header for identity names. One more rule keeps
identity meshes exact: a record an active-active identity flow delivered is not forwarded by
that same flow (every member already gets it directly).

Filters are regexes, so the names are not always finite. An `Arrival` keeps the exact set when
the filters are literal, and otherwise answers "could this name arrive?" by walking the chain.
"""

import itertools
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

from topology.core import kafka_rules, patterns
from topology.core.budget import Steps
from topology.core.flow_graph import TopologyGraph
from topology.core.model import Edge, FlowKind, Naming

# Enough for any real topology; a full mesh of many clusters with `.*` filters has more chains
# than anyone can review, and analysis stops there with a warning rather than running for hours.
MAX_ARRIVALS = 20_000
# The step budget: onward edges tried (an edge is tried when the chain's names might pass it;
# literal filters are looked up by name, so an edge none of the names can pass costs nothing).
# Every two-edge path of the graph may be tried once, plus this many per arrival allowed on
# average for longer chains; a topology whose chains fit the limit fits the budget unless most
# of what it tries carries nothing onward, and then the warning says the budget stopped it.
STEPS_PER_ARRIVAL = 10


@dataclass(frozen=True)
class Arrival:
    """Topics that reach `cluster` from `origin` along `edges` (origin first)."""

    edges: tuple[Edge, ...]
    names: frozenset[str] | None = field(default=None)  # the exact names, when finite
    # Prefixes that mark a topic on the origin as remote (`west.` when west->origin uses prefix
    # naming): such topics are another chain's arrival, not the origin's own.
    foreign: tuple[str, ...] = ()

    @property
    def cluster(self) -> str:
        return self.edges[-1].target

    @property
    def origin(self) -> str:
        return self.edges[0].source

    @cached_property
    def path(self) -> tuple[str, ...]:
        return (self.origin, *(edge.target for edge in self.edges))

    @cached_property
    def prefix(self) -> str:
        """What the chain puts before the origin's topic name: `west.east.`, or `` for identity."""
        prefix = ""
        for edge in self.edges:
            prefix = edge.settings.remote_name(edge.source, prefix)
        return prefix

    def admits(self, name: str) -> bool:
        """Could a topic of this name appear on `cluster` through this chain?"""
        if self.names is not None:
            return name in self.names
        if not name.startswith(self.prefix):
            return False
        return self.carries(name[len(self.prefix) :])

    def carries(self, base: str) -> bool:
        """Does origin topic `base` pass every edge's filter along the chain?"""
        if self.foreign and base.startswith(self.foreign):
            return False
        name = base
        for edge in self.edges:
            if kafka_rules.is_internal_topic(name) or not edge.settings.topics.admits(name):
                return False
            name = edge.settings.remote_name(edge.source, name)
        return True

    def name_of(self, base: str) -> str:
        return self.prefix + base

    def examples(self) -> list[str]:
        """A few origin topic names the chain carries: its own when finite, else built from the
        first edge's includes."""
        if self.names is not None:
            return sorted(name[len(self.prefix) :] for name in self.names)
        found = [patterns.example(p) for p in self.edges[0].settings.topics.include]
        return [base for base in found if base is not None and self.carries(base)]

    def describe(self) -> str:
        """The names as people read them: `west.east.{orders,payments}`, `east.<payments\\..*>`."""
        if self.names is not None:
            bases = sorted(name[len(self.prefix) :] for name in self.names)
            inner = bases[0] if len(bases) == 1 else "{" + ",".join(bases) + "}"
            return self.prefix + inner
        include = self.edges[0].settings.topics.include
        return self.prefix + "<" + "|".join(include) + ">"

    def route(self) -> str:
        return " -> ".join(self.path)


@dataclass(frozen=True)
class Reach:
    """Every arrival on every cluster, and whether (and why) the search stopped short."""

    arrivals: tuple[Arrival, ...]
    truncated: bool
    tried: int = 0  # onward edges tried
    budget_spent: bool = False  # truncated by the step budget, not by the number of chains
    # A backtracking filter that ran past patterns.MATCH_TIMEOUT: the search stopped there.
    slow: patterns.SlowPatternError | None = None

    @cached_property
    def _by_cluster(self) -> dict[str, list[Arrival]]:
        grouped: dict[str, list[Arrival]] = {}
        for arrival in self.arrivals:
            grouped.setdefault(arrival.cluster, []).append(arrival)
        return grouped

    def on(self, cluster: str) -> list[Arrival]:
        return self._by_cluster.get(cluster, [])


def reach(graph: TopologyGraph, limit: int = MAX_ARRIVALS, steps: Steps | None = None) -> Reach:
    """Follow every edge chain the rules allow, breadth first, up to `limit` arrivals.

    It stops as soon as more chains than that are known, waiting or followed, and when the
    step budget is spent: every two-edge path of the graph plus `limit * STEPS_PER_ARRIVAL`
    onward edges tried. Either way the first `limit` chains, shortest first, are what the
    checks see, and the result says the search was cut short and why. A filter that
    backtracks past its time limit stops the search too (`slow`). The onward edges tried are
    taken from `steps`, the whole analysis's budget, and the search stops when that is spent.
    """
    steps = Steps.default() if steps is None else steps
    routes = _Routes(graph)
    found: list[Arrival] = []
    tried = 0
    try:
        frontier = deque(a for a in map(routes.first, graph.edges()) if a is not None)
        # Half of what is left at most: the checks need steps for what the search finds.
        budget = min(routes.two_edge_paths + limit * STEPS_PER_ARRIVAL, steps.left // 2)
        while frontier:
            # More chains known than the limit (not merely as many), or no steps left.
            too_many = len(found) + len(frontier) > limit
            if too_many or tried >= budget:
                found += itertools.islice(frontier, max(limit - len(found), 0))
                steps.take(tried)
                return Reach(tuple(found), True, tried, budget_spent=not too_many)
            arrival = frontier.popleft()
            found.append(arrival)
            onward = routes.onward(arrival)
            tried += len(onward)
            frontier.extend(a for a in (_extend(arrival, e) for e in onward) if a is not None)
    except patterns.SlowPatternError as slow:
        steps.take(tried)
        return Reach(tuple(found), False, tried, slow=slow)
    steps.take(tried)
    return Reach(tuple(found), False, tried)


# Where an edge is among its source's edges out: (the flow's turn, the edge's turn).
_Place = tuple[int, int]


class _Routes:
    """The graph's edges as the search reads them, each worked out once per cluster."""

    def __init__(self, graph: TopologyGraph) -> None:
        self._foreign: dict[str, tuple[str, ...]] = {}
        self._out: dict[str, dict[int, list[Edge]]] = {}  # cluster -> flow -> edges out
        # cluster -> name -> the edges out whose literal includes name it, and the edges out
        # with a real regex among their includes; each edge keyed by its place in `_out`.
        self._by_name: dict[str, dict[str, list[tuple[_Place, Edge]]]] = {}
        self._open: dict[str, list[tuple[_Place, Edge]]] = {}
        into: dict[str, int] = {}
        rank: dict[str, dict[int, int]] = {}  # cluster -> flow -> its turn among the flows out
        for number, edge in enumerate(graph.edges()):
            flows = self._out.setdefault(edge.source, {})
            turns = rank.setdefault(edge.source, {})
            place = (turns.setdefault(edge.flow, len(turns)), number)
            flows.setdefault(edge.flow, []).append(edge)
            into[edge.target] = into.get(edge.target, 0) + 1
            names = _literals(edge)
            if names is None:
                self._open.setdefault(edge.source, []).append((place, edge))
            else:
                index = self._by_name.setdefault(edge.source, {})
                for name in names:
                    index.setdefault(name, []).append((place, edge))
            if edge.settings.naming is Naming.PREFIX:
                prefix = f"{edge.source}{edge.settings.separator}"
                known = self._foreign.setdefault(edge.target, ())
                if prefix not in known:
                    self._foreign[edge.target] = (*known, prefix)
        self._degree = {c: sum(map(len, flows.values())) for c, flows in self._out.items()}
        self.two_edge_paths = sum(n * self._degree.get(c, 0) for c, n in into.items())
        # In an identity-named active-active mesh every member gets each record directly from
        # its origin, so a record the mesh delivered is not forwarded by the same mesh.
        self._mesh = {
            flow.index
            for flow in graph.topology.flows
            if flow.kind is FlowKind.ACTIVE_ACTIVE and flow.settings.naming is Naming.IDENTITY
        }

    def first(self, edge: Edge) -> Arrival | None:
        """The origin's own topics crossing their first edge."""
        foreign = self._foreign.get(edge.source, ())
        literal = _literals(edge)
        if literal is None:
            return Arrival((edge,), None, foreign)
        own = [n for n in literal if not (foreign and n.startswith(foreign)) and _passes(edge, n)]
        names = frozenset(edge.settings.remote_name(edge.source, n) for n in own)
        return Arrival((edge,), names, foreign) if names else None

    def onward(self, arrival: Arrival) -> list[Edge]:
        """The edges a chain may take next: never back into its own path, and never out
        through literal filters that name none of the chain's topics."""
        last = arrival.edges[-1].flow
        cluster = arrival.cluster
        if arrival.names is not None and len(arrival.names) < self._degree.get(cluster, 0):
            # Look the chain's few names up rather than try every edge out of a hub.
            index = self._by_name.get(cluster, {})
            chosen = dict(self._open.get(cluster, ()))
            for name in arrival.names:
                chosen.update(index.get(name, ()))
            candidates = [chosen[place] for place in sorted(chosen)]
            return [
                edge
                for edge in candidates
                if not (edge.flow == last and edge.flow in self._mesh)
                and edge.target not in arrival.path
            ]
        return [
            edge
            for flow, edges in self._out.get(cluster, {}).items()
            if not (flow == last and flow in self._mesh)
            for edge in edges
            if edge.target not in arrival.path
        ]


def _extend(arrival: Arrival, edge: Edge) -> Arrival | None:
    chain = (*arrival.edges, edge)
    literal = _literals(edge)
    if arrival.names is not None:
        # Only the edge's own names can pass a literal filter: intersect before matching.
        candidates: set[str] | None = set(
            arrival.names if literal is None else arrival.names.intersection(literal)
        )
    else:
        candidates = None if literal is None else {n for n in literal if arrival.admits(n)}
    if candidates is None:
        return Arrival(chain, None, arrival.foreign) if _may_pass(arrival.prefix, edge) else None
    names = frozenset(
        edge.settings.remote_name(edge.source, n) for n in candidates if _passes(edge, n)
    )
    return Arrival(chain, names, arrival.foreign) if names else None


def _literals(edge: Edge) -> frozenset[str] | None:
    """The exact names an edge's includes allow, or None when any include is a real regex."""
    return edge.settings.topics.literals


def _may_pass(prefix: str, edge: Edge) -> bool:
    """Could a name that starts with `prefix` pass one of the edge's includes?

    No when every include starts with literal text that disagrees with the prefix: `svc1-.*`
    never matches `east.svc1-x`. Without this an open-ended chain would follow every regex edge
    onward, and a large topology would stop at the analysis limit on chains that carry nothing.
    """
    return any(
        lead.startswith(prefix) or prefix.startswith(lead)
        for lead in map(patterns.leading_literal, edge.settings.topics.include)
    )


def _passes(edge: Edge, name: str) -> bool:
    return not kafka_rules.is_internal_topic(name) and edge.settings.topics.admits(name)
