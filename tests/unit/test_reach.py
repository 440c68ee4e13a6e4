"""topology.core.reach: which topic names arrive on each cluster, and by which chain of edges.

Each topology is written as a user would write it and analysed; the arrivals are then compared
exactly, as (names, route) pairs, so any name too many or too few fails the test.
"""

from topology.core import reach
from topology.core.analysis import Analysis, analyse
from topology.core.reach import MAX_ARRIVALS, Arrival

CLUSTERS = """\
version: 1
clusters:
  east: {bootstrap: "10.0.0.1:9092"}
  west: {bootstrap: "10.0.0.2:9092"}
  central: {bootstrap: "10.0.0.3:9092"}
  north: {bootstrap: "10.0.0.4:9092"}
flows:
"""


def _analysed(flows: str) -> Analysis:
    analysis = analyse(CLUSTERS + flows, "t.yaml")
    assert [d for d in analysis.diagnostics if d.severity == "error"] == []
    assert analysis.reach is not None
    return analysis


def _on(analysis: Analysis, cluster: str) -> list[tuple[str, str]]:
    """What arrives on `cluster`: (names as people read them, route), sorted."""
    assert analysis.reach is not None
    return sorted((a.describe(), a.route()) for a in analysis.reach.on(cluster))


def _arrival(analysis: Analysis, cluster: str, route: str) -> Arrival:
    assert analysis.reach is not None
    return next(a for a in analysis.reach.on(cluster) if a.route() == route)


# -- prefix naming: the origin chain is in the name -----------------------------------------


def test_prefix_names_carry_the_whole_chain_of_sources() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    topics: {include: [orders]}
  - mirror: {from: west, to: central}
    topics: {include: ["east\\\\.orders"]}
"""
    )
    assert _on(analysis, "west") == [("east.orders", "east -> west")]
    assert _on(analysis, "central") == [("west.east.orders", "east -> west -> central")]
    assert _on(analysis, "east") == []
    chain = _arrival(analysis, "central", "east -> west -> central")
    assert (chain.names, chain.prefix, chain.path) == (
        frozenset({"west.east.orders"}),
        "west.east.",
        ("east", "west", "central"),
    )


def test_an_open_ended_filter_of_remote_names_lists_the_origins_own_chain_but_it_is_empty() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    topics: {include: [orders]}
  - mirror: {from: west, to: central}
    topics: {include: ["east\\\\..*"]}
"""
    )
    assert _on(analysis, "central") == [
        ("west.<east\\..*>", "west -> central"),
        ("west.east.orders", "east -> west -> central"),
    ]
    # Every name west's own chain could carry starts with east., which west holds for east.
    own = _arrival(analysis, "central", "west -> central")
    assert own.examples() == []
    assert not own.admits("west.east.orders") and not own.admits("west.east.x")


def test_a_flows_separator_goes_between_source_and_topic() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    separator: _
    topics: {include: [orders]}
  - mirror: {from: west, to: central}
    topics: {include: [east_orders]}
"""
    )
    assert _on(analysis, "central") == [("west.east_orders", "east -> west -> central")]


def test_the_mm2_cycle_rule_never_sends_a_topic_back_to_a_cluster_in_its_chain() -> None:
    analysis = _analysed("  - active-active: [east, west]\n")
    assert _on(analysis, "east") == [("west.<.*>", "west -> east")]
    assert _on(analysis, "west") == [("east.<.*>", "east -> west")]
    assert analysis.reach is not None
    arrivals = analysis.reach.arrivals
    assert any(a.admits("east.x") for a in arrivals)
    assert not any(a.admits(name) for a in arrivals for name in ("west.east.x", "east.west.east.x"))


def test_a_prefix_ring_stops_before_it_closes() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
  - mirror: {from: west, to: central}
  - mirror: {from: central, to: east}
"""
    )
    assert _on(analysis, "east") == [
        ("central.<.*>", "central -> east"),
        ("central.west.<.*>", "west -> central -> east"),
    ]
    assert _on(analysis, "central") == [
        ("west.<.*>", "west -> central"),
        ("west.east.<.*>", "east -> west -> central"),
    ]
    assert analysis.reach is not None
    assert all(len(set(a.path)) == len(a.path) for a in analysis.reach.arrivals)


def test_an_open_ended_chain_stops_at_a_filter_no_name_of_it_can_pass() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    topics: {include: ["svc1-.*"]}
  - mirror: {from: west, to: central}
    topics: {include: ["svc2-.*"]}
"""
    )
    # east's svc1-x is east.svc1-x on west, which svc2-.* never matches.
    assert _on(analysis, "central") == [("west.<svc2-.*>", "west -> central")]


def test_an_open_ended_chain_goes_on_through_a_filter_its_names_can_pass() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    topics: {include: ["svc1-.*"]}
  - mirror: {from: west, to: central}
    topics: {include: ["svc2-.*", "east\\\\.svc.*"]}
"""
    )
    assert _on(analysis, "central") == [
        ("west.<svc2-.*|east\\.svc.*>", "west -> central"),
        ("west.east.<svc1-.*>", "east -> west -> central"),
    ]
    forwarded = _arrival(analysis, "central", "east -> west -> central")
    assert forwarded.admits("west.east.svc1-x") and not forwarded.admits("west.east.svc2-x")


# -- identity naming: meshes forward nothing a member already got directly ------------------


def test_each_identity_mesh_member_gets_each_others_topics_once_directly() -> None:
    analysis = _analysed(
        """\
  - active-active: [east, west, central]
    naming: identity
    topics: {include: [orders]}
"""
    )
    assert _on(analysis, "east") == [
        ("orders", "central -> east"),
        ("orders", "west -> east"),
    ]
    assert _on(analysis, "west") == [("orders", "central -> west"), ("orders", "east -> west")]
    assert _on(analysis, "central") == [
        ("orders", "east -> central"),
        ("orders", "west -> central"),
    ]
    assert analysis.reach is not None
    assert len(analysis.reach.arrivals) == 6  # no two-hop chains
    assert analysis.diagnostics == ()  # and so no collision and no second path


def test_separate_identity_flows_do_forward() -> None:
    """The mesh rule is about one active-active flow; two mirrors chain as usual."""
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    naming: identity
    topics: {include: [orders]}
  - mirror: {from: west, to: central}
    naming: identity
    topics: {include: [orders]}
"""
    )
    assert _on(analysis, "central") == [
        ("orders", "east -> west -> central"),
        ("orders", "west -> central"),
    ]


# -- literal pruning and foreign topics -----------------------------------------------------


def test_literal_filters_prune_names_at_every_hop() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    topics: {include: [orders, payments]}
  - mirror: {from: west, to: central}
    topics: {include: ["east\\\\.orders", inventory]}
  - mirror: {from: central, to: north}
    topics: {include: [inventory]}
"""
    )
    assert _on(analysis, "west") == [("east.{orders,payments}", "east -> west")]
    assert _on(analysis, "central") == [
        ("west.east.orders", "east -> west -> central"),  # payments stopped at west
        ("west.inventory", "west -> central"),
    ]
    assert _on(analysis, "north") == [("central.inventory", "central -> north")]
    names = _arrival(analysis, "west", "east -> west").names
    assert names == frozenset({"east.orders", "east.payments"})


def test_a_chain_whose_literal_names_all_stop_does_not_arrive() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    topics: {include: [orders]}
  - mirror: {from: west, to: central}
    topics: {include: [inventory]}
"""
    )
    assert _on(analysis, "central") == [("west.inventory", "west -> central")]


def test_excludes_and_internal_topics_are_pruned_from_literal_names() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    topics: {include: [orders, orders-internal, __offsets, audit], exclude: [audit]}
"""
    )
    assert _on(analysis, "west") == [("east.orders", "east -> west")]


def test_a_clusters_remote_topics_are_not_counted_as_its_own() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    topics: {include: [orders]}
  - mirror: {from: west, to: central}
    topics: {include: [orders, "east\\\\.orders"]}
"""
    )
    # west's east.orders is east's topic: it reaches central through the chain from east, and
    # west's own arrival holds only west's own orders.
    assert _on(analysis, "central") == [
        ("west.east.orders", "east -> west -> central"),
        ("west.orders", "west -> central"),
    ]
    own = _arrival(analysis, "central", "west -> central")
    assert own.foreign == ("east.",)


def test_foreign_prefixes_also_bound_open_ended_chains() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    separator: "-"
  - mirror: {from: west, to: central}
"""
    )
    own = _arrival(analysis, "central", "west -> central")
    forwarded = _arrival(analysis, "central", "east -> west -> central")
    assert own.foreign == ("east-",)
    assert own.admits("west.clicks") and not own.admits("west.east-clicks")
    assert forwarded.admits("west.east-clicks") and not forwarded.admits("west.clicks")


def test_identity_edges_into_a_cluster_mark_nothing_foreign() -> None:
    analysis = _analysed(
        """\
  - mirror: {from: east, to: west}
    naming: identity
    topics: {include: [orders]}
  - mirror: {from: west, to: central}
"""
    )
    assert _arrival(analysis, "central", "west -> central").foreign == ()


# -- the limit -------------------------------------------------------------------------------


MESH = "  - active-active: [east, west, central, north]\n"


def test_a_full_mesh_has_one_arrival_per_simple_path() -> None:
    analysis = _analysed(MESH)
    assert analysis.reach is not None
    # Four clusters: 12 one-hop, 24 two-hop and 24 three-hop chains, none revisiting a cluster.
    assert (len(analysis.reach.arrivals), analysis.reach.truncated) == (60, False)
    assert analysis.reach.on("east")[0].route() == "west -> east"  # breadth first


def test_the_search_stops_at_its_limit_and_says_so() -> None:
    analysis = _analysed(MESH)
    assert analysis.graph is not None
    limited = reach.reach(analysis.graph, limit=10)
    assert (len(limited.arrivals), limited.truncated) == (10, True)
    assert all(len(a.edges) == 1 for a in limited.arrivals)  # the shortest chains come first


def test_a_limit_the_search_just_fits_in_is_not_reported_as_reached() -> None:
    analysis = _analysed(MESH)
    assert analysis.graph is not None
    exact = reach.reach(analysis.graph, limit=60)
    assert (len(exact.arrivals), exact.truncated) == (60, False)
    assert reach.reach(analysis.graph, limit=59).truncated


def test_the_default_limit_is_generous_but_finite() -> None:
    assert MAX_ARRIVALS == 20_000
