"""topology.core.offsets.route: which topic a group's topic is on another cluster, and by
which flows its records got there, on plain observed clusters."""

import pytest

from topology.core import analysis
from topology.core.model import Topology
from topology.core.observed import Cluster, Owned, Topic
from topology.core.offsets.route import Hop, NoRoute, Route, Unstamped, route

TWO = """
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:9001"}
  west: {bootstrap: "127.0.0.1:9002"}
defaults: {replication_factor: 1}
flows:
"""

PREFIX_MIRROR = TWO + '  - mirror: {from: east, to: west}\n    topics: {include: ["orders.*"]}\n'
IDENTITY_MIRROR = (
    TWO
    + '  - mirror: {from: east, to: west}\n    naming: identity\n    topics: {include: [".*"]}\n'
)
IDENTITY_ACTIVE_ACTIVE = (
    TWO
    + '  - active-active: [east, west]\n    naming: identity\n    topics: {include: ["orders"]}\n'
)
UNSTAMPED_MIRROR = PREFIX_MIRROR + "    provenance: false\n"

CHAIN = """
version: 1
clusters:
  a: {bootstrap: "127.0.0.1:9001"}
  b: {bootstrap: "127.0.0.1:9002"}
  c: {bootstrap: "127.0.0.1:9003"}
defaults: {replication_factor: 1}
flows:
  - mirror: {from: a, to: b}
  - mirror: {from: b, to: c}
"""


def topology(text: str) -> Topology:
    result = analysis.analyse(text, "t.yaml")
    assert result.ok, result.diagnostics
    assert result.topology is not None
    return result.topology


def cluster(name: str, *topics: str, owned: tuple[Owned, ...] = ()) -> Cluster:
    return Cluster(
        name=name,
        brokers=1,
        default_replication_factor=1,
        topics={t: Topic(t, 3, 1) for t in topics},
        acls=None,
        owned={o.key: o for o in owned},
    )


def clusters(*found: Cluster) -> dict[str, Cluster]:
    return {c.name: c for c in found}


def copied_by(name: str, *edges: str) -> Owned:
    """The ownership record of a topic topo created as the copy of these flows."""
    return Owned("topic", name, edges, owner="t")


MIRRORED = clusters(cluster("east", "orders", "payments"), cluster("west", "east.orders"))


def test_a_prefix_mirror_routes_forward_to_the_prefixed_copy() -> None:
    found = route(topology(PREFIX_MIRROR), MIRRORED, "east", "orders", "west")
    assert found == Route(
        origin="east",
        topic="orders",
        destination="west",
        destination_topic="east.orders",
        forward=(Hop("east->west", "orders", "east.orders"),),
        backward=(),
    )
    assert not found.mixed
    assert (found.forward[0].source, found.forward[0].target) == ("east", "west")


def test_failback_of_a_prefixed_copy_routes_backward_to_its_origin_topic() -> None:
    found = route(topology(PREFIX_MIRROR), MIRRORED, "west", "east.orders", "east")
    assert found == Route(
        origin="west",
        topic="east.orders",
        destination="east",
        destination_topic="orders",
        forward=(),
        backward=(Hop("east->west", "orders", "east.orders"),),
    )
    assert not found.mixed


def test_an_identity_mirror_routes_forward_under_the_same_name() -> None:
    loaded = topology(IDENTITY_MIRROR)
    observed = clusters(
        cluster("east", "orders"),
        cluster("west", "orders", owned=(copied_by("orders", "east->west"),)),
    )
    found = route(loaded, observed, "east", "orders", "west")
    assert found.destination_topic == "orders"
    assert found.forward == (Hop("east->west", "orders", "orders"),)
    assert found.backward == ()
    back = route(loaded, observed, "west", "orders", "east")
    assert back.destination_topic == "orders"
    assert (back.forward, back.backward) == ((), (Hop("east->west", "orders", "orders"),))


def test_identity_active_active_with_writes_on_both_sides_is_mixed() -> None:
    """Neither side's orders is topo's copy: each holds records of both origins."""
    loaded = topology(IDENTITY_ACTIVE_ACTIVE)
    observed = clusters(cluster("east", "orders"), cluster("west", "orders"))
    found = route(loaded, observed, "east", "orders", "west")
    assert found.destination_topic == "orders"
    assert found.forward == (Hop("east->west", "orders", "orders"),)
    assert found.backward == (Hop("west->east", "orders", "orders"),)
    assert found.mixed
    other_way = route(loaded, observed, "west", "orders", "east")
    assert other_way.forward == (Hop("west->east", "orders", "orders"),)
    assert other_way.backward == (Hop("east->west", "orders", "orders"),)
    assert other_way.mixed


def test_identity_active_active_where_one_side_is_the_copy_flows_one_way() -> None:
    """west's orders was created by east->west: it is never synced back to east."""
    loaded = topology(IDENTITY_ACTIVE_ACTIVE)
    observed = clusters(
        cluster("east", "orders"),
        cluster("west", "orders", owned=(copied_by("orders", "east->west"),)),
    )
    found = route(loaded, observed, "east", "orders", "west")
    assert (found.forward, found.backward) == ((Hop("east->west", "orders", "orders"),), ())
    assert not found.mixed


def test_two_hops_under_prefix_naming_route_forward_through_both() -> None:
    observed = clusters(cluster("a", "t"), cluster("b", "a.t"), cluster("c", "b.a.t"))
    found = route(topology(CHAIN), observed, "a", "t", "c")
    assert found.destination_topic == "b.a.t"
    assert found.forward == (Hop("a->b", "t", "a.t"), Hop("b->c", "a.t", "b.a.t"))
    assert found.backward == ()
    back = route(topology(CHAIN), observed, "c", "b.a.t", "a")
    assert back.destination_topic == "t"
    assert back.forward == ()
    assert back.backward == (Hop("a->b", "t", "a.t"), Hop("b->c", "a.t", "b.a.t"))


def test_a_topic_the_topology_does_not_replicate_has_no_route() -> None:
    loaded = topology(PREFIX_MIRROR)
    with pytest.raises(NoRoute, match="payments"):
        route(loaded, MIRRORED, "east", "payments", "west")


def test_a_topic_made_on_the_target_has_no_route_back() -> None:
    observed = clusters(cluster("east", "orders"), cluster("west", "east.orders", "local"))
    with pytest.raises(NoRoute, match="local"):
        route(topology(PREFIX_MIRROR), observed, "west", "local", "east")


def test_a_topic_no_flow_carries_towards_the_destination_has_no_route() -> None:
    """b's own topic flows on to c, never to a, and nothing on a is copied to that name."""
    observed = clusters(cluster("a", "t"), cluster("b", "a.t", "local"), cluster("c", "b.a.t"))
    assert route(topology(CHAIN), observed, "b", "local", "c").destination_topic == "b.local"
    with pytest.raises(NoRoute, match="neither from b to a nor from a to b"):
        route(topology(CHAIN), observed, "b", "local", "a")


def test_a_flow_without_provenance_cannot_be_translated_exactly() -> None:
    """Its own kind of NoRoute: the topic is linked, but its copies carry no source offsets."""
    loaded = topology(UNSTAMPED_MIRROR)
    with pytest.raises(Unstamped, match=r"east->west has provenance: false"):
        route(loaded, MIRRORED, "east", "orders", "west")
    with pytest.raises(NoRoute, match="provenance"):
        route(loaded, MIRRORED, "west", "east.orders", "east")
    with pytest.raises(NoRoute) as unlinked:
        route(loaded, MIRRORED, "east", "payments", "west")
    assert not isinstance(unlinked.value, Unstamped)
