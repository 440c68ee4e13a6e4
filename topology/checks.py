"""Rules over the names that reach each cluster: collisions, owned topics, lengths, paths.

Each rule reads the `Reach` of the graph and returns diagnostics located at the flow (or the
cluster entry) a user would edit to fix it.
"""

import re
from collections import defaultdict
from itertools import combinations

from topology import kafka_rules, patterns
from topology.diagnostics import Diagnostic, error, warning
from topology.graph import TopologyGraph
from topology.reach import Arrival, Reach


def check(graph: TopologyGraph, reach: Reach) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for cluster in graph.clusters:
        arrivals = reach.on(cluster)
        found += _collisions(graph, arrivals)
        found += _owned_topics(graph, cluster, arrivals)
        found += _metric_collisions(graph, cluster, arrivals)
    found += _long_names(graph, reach)
    found += _replicates_nothing(graph)
    if reach.truncated:
        found.append(
            warning(
                "T309",
                f"stopped after {len(reach.arrivals)} replication chains; topics travel through "
                "very many multi-hop paths, so narrow the topics filters of the mesh",
                graph.topology.flows[0].span,
            )
        )
    return found


def _witness(first: Arrival, second: Arrival) -> str | None:
    """A topic name both arrivals can deliver to their cluster, if we can find one."""
    if first.names is not None or second.names is not None:
        finite, other = (first, second) if first.names is not None else (second, first)
        assert finite.names is not None
        return next((n for n in sorted(finite.names) if other.admits(n)), None)
    candidates = [a.name_of(base) for a in (first, second) for base in a.examples()]
    return next((n for n in candidates if first.admits(n) and second.admits(n)), None)


def _collisions(graph: TopologyGraph, arrivals: list[Arrival]) -> list[Diagnostic]:
    found = []
    for first, second in combinations(arrivals, 2):
        name = _witness(first, second)
        if name is None:
            continue
        flow = graph.flow(second.edges[-1])
        if first.origin != second.origin:
            if first.edges[-1].merges and second.edges[-1].merges:
                continue  # an aggregate (or identity active-active) declares this merge
            message = (
                f"topic '{name}' on {second.cluster} would get records from {first.origin} "
                f"({first.route()}) and from {second.origin} ({second.route()}); declare the merge "
                "with an aggregate flow, or narrow the topics filters"
            )
        else:
            message = (
                f"topic '{name}' reaches {second.cluster} from {first.origin} by two paths "
                f"({first.route()} and {second.route()}), so every record would be written twice; "
                "narrow the topics filters of one path"
            )
        found.append(error("T304", message, flow.span))
    found += _several_paths(graph, arrivals)
    return found


def _several_paths(graph: TopologyGraph, arrivals: list[Arrival]) -> list[Diagnostic]:
    """Prefix naming: one origin's topics reaching a cluster twice, under two names."""
    found = []
    by_origin: dict[str, list[Arrival]] = defaultdict(list)
    for arrival in arrivals:
        by_origin[arrival.origin].append(arrival)
    for origin, group in by_origin.items():
        for first, second in combinations(group, 2):
            if first.prefix == second.prefix:
                continue  # same name: a collision, reported above
            bases = [*first.examples(), *second.examples()]
            base = next((b for b in bases if first.carries(b) and second.carries(b)), None)
            if base is None:
                continue
            flow = graph.flow(second.edges[-1])
            upstream = (
                Arrival(second.edges[:-1]).prefix
                or f"{origin}{second.edges[-1].settings.separator}"
            )
            found.append(
                warning(
                    "T308",
                    f"{origin}'s topic '{base}' reaches {second.cluster} twice, as "
                    f"'{first.name_of(base)}' ({first.route()}) and '{second.name_of(base)}' "
                    f"({second.route()}); if one copy is enough, exclude '{re.escape(upstream)}.*' "
                    f"from flows[{flow.index}] ({flow.name})",
                    flow.span,
                )
            )
    return found


def _owned_topics(graph: TopologyGraph, cluster: str, arrivals: list[Arrival]) -> list[Diagnostic]:
    owned = graph.topology.clusters[cluster].topics
    found = []
    for arrival in arrivals:
        if arrival.edges[-1].merges:
            continue
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
