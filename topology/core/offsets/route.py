"""Where a consumer group's topic on one cluster is on another, and how its records are linked.

Every copy topo makes carries the record's offset on each cluster it was copied from (the
`topo-offsets` header, topology/core/jobs.py). So a topic's records on cluster T carry their offsets
on F when they reached T through F (`forward`: T is downstream of F), and a topic's records on
F carry their offsets on T when they came from T (`backward`: failback to where the data came
from, `east.orders` on west back to `orders` on east). Under identity naming in an
active-active mesh both hold at once: the topic is the same on both sides and each side holds
records of both origins (`mixed`).

Pure: the clusters are observations made elsewhere.
"""

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from topology.core import observed
from topology.core.model import Topology
from topology.core.naming import remote_name


@dataclass(frozen=True)
class Hop:
    edge: str  # "east->west"
    source_topic: str
    target_topic: str

    @property
    def source(self) -> str:
        return self.edge.split("->")[0]

    @property
    def target(self) -> str:
        return self.edge.split("->")[1]


@dataclass(frozen=True)
class Route:
    origin: str  # the cluster the group committed on
    topic: str  # the topic there
    destination: str  # the cluster the group moves to
    destination_topic: str
    forward: tuple[Hop, ...]  # origin -> ... -> destination, when the copies flow that way
    backward: tuple[Hop, ...]  # destination -> ... -> origin, when they flow the other way

    @property
    def mixed(self) -> bool:
        return bool(self.forward) and bool(self.backward)


class NoRoute(Exception):
    """Why a topic on one cluster has no linked topic on another."""


class Unstamped(NoRoute):
    """The topic is copied, but by a flow whose copies carry no source offsets."""


def route(
    topology: Topology,
    clusters: Mapping[str, observed.Cluster],
    origin: str,
    topic: str,
    destination: str,
) -> Route:
    """The route of `topic` on `origin` to `destination`, the shortest either way."""
    forward = _path(topology, clusters, origin, topic, destination)
    backward = _source_chain(topology, clusters, origin, topic, destination)
    if forward and backward and forward[-1].target_topic != backward[0].source_topic:
        backward = ()  # two different topics: the copy that flows forward is the one a group wants
    if not forward and not backward:
        raise NoRoute(
            f"no flow links topic {topic} on {origin} with {destination}: the topology copies "
            f"it neither from {origin} to {destination} nor from {destination} to {origin}"
        )
    unstamped = [
        h.edge for h in (*forward, *backward) if not topology.edge(h.edge).settings.provenance
    ]
    if unstamped:
        raise Unstamped(
            f"flow {unstamped[0]} has provenance: false, so its copies carry no source offsets "
            f"and offsets of {topic} cannot be translated exactly"
        )
    name = forward[-1].target_topic if forward else backward[0].source_topic
    return Route(origin, topic, destination, name, forward, backward)


def _path(
    topology: Topology,
    clusters: Mapping[str, observed.Cluster],
    start: str,
    topic: str,
    end: str,
) -> tuple[Hop, ...]:
    """The hops by which `topic` on `start` is copied to `end` (shortest), or ()."""
    queue: deque[tuple[str, str, tuple[Hop, ...]]] = deque([(start, topic, ())])
    seen = {(start, topic)}
    while queue:
        cluster, name, hops = queue.popleft()
        if cluster == end and hops:
            return hops
        for edge in topology.edges():
            if edge.source != cluster or edge.source not in clusters:
                continue
            remote = remote_name(edge, name, clusters[edge.source])
            if remote is None or (edge.target, remote) in seen:
                continue
            seen.add((edge.target, remote))
            queue.append((edge.target, remote, (*hops, Hop(edge.name, name, remote))))
    return ()


def _source_chain(
    topology: Topology,
    clusters: Mapping[str, observed.Cluster],
    cluster: str,
    topic: str,
    end: str,
) -> tuple[Hop, ...]:
    """The hops by which `topic` on `cluster` came from `end` (shortest), or ()."""
    queue: deque[tuple[str, str, tuple[Hop, ...]]] = deque([(cluster, topic, ())])
    seen = {(cluster, topic)}
    while queue:
        here, name, hops = queue.popleft()
        if here == end and hops:
            return hops
        for edge in topology.edges():
            if edge.target != here or edge.source not in clusters:
                continue
            source = clusters[edge.source]
            for upstream in sorted(source.topics):
                if remote_name(edge, upstream, source) != name or (edge.source, upstream) in seen:
                    continue
                seen.add((edge.source, upstream))
                queue.append((edge.source, upstream, (Hop(edge.name, upstream, name), *hops)))
    return ()
