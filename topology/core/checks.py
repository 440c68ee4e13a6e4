"""Rules over the names that reach each cluster: collisions, owned topics, lengths, paths.

Each rule reads the `Reach` of the graph and returns diagnostics located at the flow (or the
cluster entry) a user would edit to fix it.
"""

import re
from collections import defaultdict
from collections.abc import Iterator
from itertools import combinations

from topology.core import kafka_rules, patterns
from topology.core.budget import Steps
from topology.core.diagnostics import Diagnostic, error, warning
from topology.core.flow_graph import TopologyGraph
from topology.core.reach import Arrival, Reach


class _OutOfSteps(Exception):
    """The analysis's step budget ran out during the checks."""


def check(graph: TopologyGraph, reach: Reach, steps: Steps | None = None) -> list[Diagnostic]:
    steps = Steps.default() if steps is None else steps
    found: list[Diagnostic] = []
    slow = reach.slow
    checked = True
    if slow is None:
        try:
            _reached(graph, reach, _Counter(steps), found)
        except patterns.SlowPatternError as raised:
            slow = raised
        except _OutOfSteps:
            checked = False
    if slow is not None:
        # The checks that match names would be partial: the slow pattern is the one to fix.
        found = [_too_slow(graph, slow)]
    elif not checked:
        found.append(_checks_stopped(graph, reach, steps))
    elif reach.truncated:
        found.append(_stopped(graph, reach))
    return found


class _Counter:
    """The checks' side of the step budget: `take` raises _OutOfSteps once it is spent."""

    def __init__(self, steps: Steps) -> None:
        self.steps = steps

    def take(self, count: int = 1) -> None:
        if not self.steps.take(count):
            raise _OutOfSteps


def _reached(
    graph: TopologyGraph, reach: Reach, counter: _Counter, found: list[Diagnostic]
) -> None:
    """The rules over the names each chain carries (they match names against filters). What
    they found is appended to `found` as they go, so a budget spent halfway keeps it."""
    counter.take(len(reach.arrivals))
    alike = _representatives(reach.arrivals, counter)
    found += _replicates_nothing(graph)
    found += _long_names(graph, reach)
    for cluster in graph.clusters:
        arrivals = reach.on(cluster)
        if not arrivals and not graph.topology.clusters[cluster].topics:
            continue  # nothing arrives and it owns no topic: nothing to compare
        found += _metric_collisions(graph, cluster, arrivals)
        found += _owned_topics(graph, cluster, arrivals, counter)
        _collisions(graph, [a for a in arrivals if id(a) in alike], counter, found)
    found += _several_paths(graph, [a for a in reach.arrivals if id(a) in alike], counter)


def _representatives(arrivals: tuple[Arrival, ...], counter: _Counter) -> set[int]:
    """The ids of one arrival of each kind: arrivals alike in everything the pairwise checks
    read (origin, last edge, the names they admit) are one for those checks, and the first
    found, the shortest, stands for them. An identity mesh of seven clusters has 13,692
    chains but 252 kinds, and comparing chains pairwise is what once took minutes."""
    kept: dict[tuple[object, ...], int] = {}
    for arrival in arrivals:
        counter.take(len(arrival.edges))
        kept.setdefault(_likeness(arrival), id(arrival))
    return set(kept.values())


def _likeness(arrival: Arrival) -> tuple[object, ...]:
    last = arrival.edges[-1]
    where = (arrival.origin, last.source, last.target, last.flow, last.merges)
    if arrival.names is not None:
        return (*where, arrival.names)
    # An open-ended chain admits the names that pass each edge's filter under the name the
    # chain gives them there: the set of (prefix so far, filter) pairs decides it.
    passes = set()
    prefix = ""
    for edge in arrival.edges:
        passes.add((prefix, edge.settings.topics))
        prefix = edge.settings.remote_name(edge.source, prefix)
    first = arrival.edges[0].settings.topics  # where its example names come from
    return (*where, arrival.prefix, arrival.foreign, first, frozenset(passes))


def _checks_stopped(graph: TopologyGraph, reach: Reach, steps: Steps) -> Diagnostic:
    message = (
        f"stopped the checks after {steps.budget} steps (the analysis's step budget, which "
        f"grows with the file): the {len(reach.arrivals)} replication chains found meet in "
        "more ways than can be compared, so collisions may be missing from this report; "
        "narrow the topics filters, or use prefix naming, so fewer chains carry the same topics"
    )
    return warning("T309", message, graph.topology.flows[0].span)


def _stopped(graph: TopologyGraph, reach: Reach) -> Diagnostic:
    if reach.budget_spent:
        message = (
            f"stopped after trying {reach.tried} onward edges, which found "
            f"{len(reach.arrivals)} replication chains (the search's step budget): most edges "
            "tried carried nothing onward, and the checks saw only the chains found; narrow the "
            "topics filters of the flows through the busiest clusters"
        )
    else:
        message = (
            f"stopped after {len(reach.arrivals)} replication chains; topics travel through "
            "very many multi-hop paths, so narrow the topics filters of the mesh"
        )
    return warning("T309", message, graph.topology.flows[0].span)


def _too_slow(graph: TopologyGraph, slow: patterns.SlowPatternError) -> Diagnostic:
    """T202 at the first flow whose topic filters hold the pattern that ran past its limit."""
    flows = graph.topology.flows
    place = next(
        (
            (flow, f"topics.{side}")
            for flow in flows
            for side, written in (
                ("include", flow.settings.topics.include),
                ("exclude", flow.settings.topics.exclude),
            )
            if slow.pattern in written
        ),
        (flows[0], "topics"),
    )
    flow, where = place
    return error(
        "T202",
        f"'{slow.pattern}' took too long to match topic names (it backtracks catastrophically: "
        f"'{slow.shown}' ran past {patterns.MATCH_TIMEOUT} s) in flows[{flow.index}] "
        f"({flow.name}) {where}; {patterns.SLOW_FIX}",
        flow.span,
    )


def _witness(first: Arrival, second: Arrival) -> str | None:
    """A topic name both arrivals can deliver to their cluster, if we can find one."""
    if first.names is not None or second.names is not None:
        finite, other = (first, second) if first.names is not None else (second, first)
        assert finite.names is not None
        return next((n for n in sorted(finite.names) if other.admits(n)), None)
    candidates = [a.name_of(base) for a in (first, second) for base in a.examples()]
    return next((n for n in candidates if first.admits(n) and second.admits(n)), None)


def _candidate_pairs(
    arrivals: list[Arrival], counter: _Counter
) -> Iterator[tuple[Arrival, Arrival]]:
    """Pairs that might collide. An aggregate (or identity active-active) flow declares that
    records from different origins merge, so arrivals whose last edge merges are paired only
    with their own origin's and with the others; an identity mesh of 200 clusters would
    otherwise pair 199 arrivals with each other on every cluster."""
    plain = [a for a in arrivals if not a.edges[-1].merges]
    merging: dict[str, list[Arrival]] = defaultdict(list)
    for arrival in arrivals:
        if arrival.edges[-1].merges:
            merging[arrival.origin].append(arrival)
    seen: set[tuple[int, int]] = set()
    for group in merging.values() or [[]]:
        yield from _overlapping_pairs(plain + group, seen, counter)


def _overlapping_pairs(
    arrivals: list[Arrival], seen: set[tuple[int, int]], counter: _Counter
) -> Iterator[tuple[Arrival, Arrival]]:
    """Pairs of arrivals whose names might overlap, without comparing every pair; each pair
    once, remembered in `seen`.

    Finite arrivals meet through a name index; an open-ended arrival can only overlap another
    whose prefix is a prefix of its own (`east.` and `west.east.` never share a name).
    """
    finite = [a for a in arrivals if a.names is not None]
    open_ended = [a for a in arrivals if a.names is None]
    by_name: dict[str, list[Arrival]] = defaultdict(list)
    for arrival in finite:
        for name in arrival.names or ():
            by_name[name].append(arrival)

    def once(first: Arrival, second: Arrival) -> bool:
        counter.take()
        key = (min(id(first), id(second)), max(id(first), id(second)))
        fresh = key not in seen
        seen.add(key)
        return fresh

    for group in by_name.values():
        for first, second in combinations(group, 2):
            if once(first, second):
                yield first, second
    by_prefix: dict[str, list[Arrival]] = defaultdict(list)
    for arrival in open_ended:
        by_prefix[arrival.prefix].append(arrival)
    for arrival in open_ended:
        for cut in range(len(arrival.prefix) + 1):
            for other in by_prefix.get(arrival.prefix[:cut], ()):
                if other is not arrival and once(other, arrival):
                    yield other, arrival
        for other in finite:
            if once(other, arrival):
                yield other, arrival


def _collisions(
    graph: TopologyGraph, arrivals: list[Arrival], counter: _Counter, found: list[Diagnostic]
) -> None:
    """T304 for each pair of flows whose chains deliver one name to the cluster, appended to
    `found`. When the step budget runs out while pairing, the pairs found so far are still
    reported before the budget's end is passed on."""
    reported: set[tuple[int, int]] = set()
    pairs: list[tuple[Arrival, Arrival]] = []
    out_of_steps = None
    try:
        pairs.extend(_candidate_pairs(arrivals, counter))
    except _OutOfSteps as spent:
        out_of_steps = spent
    pairs.sort(key=lambda p: p[0].origin != p[1].origin)
    for first, second in pairs:
        flows = (first.edges[-1].flow, second.edges[-1].flow)
        if flows in reported or first.edges[-1] == second.edges[-1]:
            continue  # one report per pair of flows; a shared last edge merged them upstream
        same_origin = first.origin == second.origin
        if not same_origin and first.edges[-1].merges and second.edges[-1].merges:
            continue  # an aggregate (or identity active-active) declares this merge
        name = _witness(first, second)
        if name is None:
            continue
        reported.add(flows)
        flow = graph.flow(second.edges[-1])
        if same_origin:
            message = (
                f"topic '{name}' reaches {second.cluster} from {first.origin} by two paths "
                f"({first.route()} and {second.route()}), so every record would be written twice; "
                "narrow the topics filters of one path"
            )
        else:
            message = (
                f"topic '{name}' on {second.cluster} would get records from {first.origin} "
                f"({first.route()}) and from {second.origin} ({second.route()}); declare the merge "
                "with an aggregate flow, or narrow the topics filters"
            )
        # Certain when a literal name collides, or when two origins share one identity namespace;
        # two open-ended prefix families only might (it depends on which topics exist).
        certain = first.names is not None or second.names is not None or not first.prefix
        if certain or same_origin:
            found.append(error("T304", message, flow.span))
        else:
            found.append(warning("T304", f"{message} (possible, if such topics exist)", flow.span))
    if out_of_steps is not None:
        raise out_of_steps


def _several_paths(
    graph: TopologyGraph, arrivals: list[Arrival], counter: _Counter
) -> list[Diagnostic]:
    """Prefix naming: one origin's topics reaching a cluster twice, under two names.

    MM2 does the same in a mesh of three or more; the usual fix is to exclude remote topics
    from the forwarding flow, so one warning per flow lists the prefixes to exclude.
    """
    examples: dict[int, str] = {}
    excludes: dict[int, set[str]] = defaultdict(set)
    groups: dict[tuple[str, str], list[Arrival]] = defaultdict(list)
    for arrival in arrivals:
        groups[arrival.cluster, arrival.origin].append(arrival)
    for (cluster, origin), group in groups.items():
        group.sort(key=lambda arrival: len(arrival.edges))
        for position, second in enumerate(group):
            flow = second.edges[-1].flow
            if flow in examples:
                continue  # one example per flow is enough
            for first in group[:position]:
                counter.take()
                if first.prefix == second.prefix:
                    continue  # the same name twice is a collision, reported by _collisions
                bases = [*first.examples(), *second.examples()]
                base = next((b for b in bases if first.carries(b) and second.carries(b)), None)
                if base is not None:
                    examples[flow] = (
                        f"{origin}'s topic '{base}' reaches {cluster} as '{first.name_of(base)}' "
                        f"({first.route()}) and as '{second.name_of(base)}' ({second.route()})"
                    )
                    break
    for group in groups.values():
        for arrival in group[1:]:  # sorted: each has a shorter way in from the same origin
            if arrival.edges[-1].flow in examples and len(arrival.edges) > 1:
                into = arrival.edges[-2]
                excludes[arrival.edges[-1].flow].add(
                    re.escape(into.source + into.settings.separator)
                )
    return [
        warning(
            "T308",
            f"{examples[index]}; if one copy is enough, exclude remote topics from "
            f"flows[{index}] ({graph.topology.flow(index).name}): "
            f"{', '.join(chr(39) + p + '.*' + chr(39) for p in sorted(excludes[index]))}",
            graph.topology.flow(index).span,
        )
        for index in sorted(examples)
    ]


def _owned_topics(
    graph: TopologyGraph, cluster: str, arrivals: list[Arrival], counter: _Counter
) -> list[Diagnostic]:
    owned = graph.topology.clusters[cluster].topics
    found = []
    for arrival in arrivals:
        if arrival.edges[-1].merges:
            continue
        counter.take(len(owned))
        for topic in owned:
            if arrival.admits(topic):
                flow = graph.flow(arrival.edges[-1])
                found.append(
                    error(
                        "T305",
                        f"topic '{topic}' belongs to {cluster}'s own applications, but "
                        f"flows[{flow.index}] "
                        f"({flow.name}) would also write {arrival.origin}'s records into it "
                        f"({arrival.route()}); use prefix naming or exclude it",
                        flow.span,
                    )
                )
    return found


def _metric_collisions(
    graph: TopologyGraph, cluster: str, arrivals: list[Arrival]
) -> list[Diagnostic]:
    names = set(graph.topology.clusters[cluster].topics)
    for arrival in arrivals:
        names |= arrival.names or set()
    by_metric: dict[str, set[str]] = defaultdict(set)
    for name in names:
        by_metric[kafka_rules.metric_name(name)].add(name)
    return [
        warning(
            "T208",
            f"topics {' and '.join(repr(n) for n in sorted(group))} on {cluster} differ only "
            "by '.' "
            "and '_', so their metrics collide (Kafka warns about this too)",
            graph.topology.clusters[cluster].span,
        )
        for group in by_metric.values()
        if len(group) > 1
    ]


def _long_names(graph: TopologyGraph, reach: Reach) -> list[Diagnostic]:
    found = []
    for arrival in reach.arrivals:
        too_long = sorted(n for n in arrival.names or () if len(n) > kafka_rules.MAX_TOPIC_NAME)
        if arrival.names is None and len(arrival.prefix) >= kafka_rules.MAX_TOPIC_NAME:
            too_long = [arrival.prefix + "..."]
        if too_long:
            flow = graph.flow(arrival.edges[-1])
            found.append(
                error(
                    "T306",
                    f"remote topic '{too_long[0][:60]}...' on {arrival.cluster} "
                    f"({arrival.route()}) "
                    f"is longer than Kafka's {kafka_rules.MAX_TOPIC_NAME} characters",
                    flow.span,
                )
            )
    return found


def _replicates_nothing(graph: TopologyGraph) -> list[Diagnostic]:
    found = []
    for flow in graph.topology.flows:
        names = [patterns.literal(p) for p in flow.settings.topics.include]
        if any(n is None for n in names):
            continue
        dropped = [
            n
            for n in names
            if n is not None
            and (kafka_rules.is_internal_topic(n) or not flow.settings.topics.admits(n))
        ]
        if dropped and len(dropped) == len(names):
            found.append(
                warning(
                    "T307",
                    f"flows[{flow.index}] ({flow.name}) replicates nothing: "
                    f"{', '.join(repr(n) for n in dropped)} "
                    f"{'is' if len(dropped) == 1 else 'are'} excluded or internal",
                    flow.span,
                )
            )
    return found
