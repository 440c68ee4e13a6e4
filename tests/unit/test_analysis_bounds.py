"""Bad input that once made the analysis run for minutes: each must finish, with a located
diagnostic where one is due. pytest-timeout stops a regression; benchmarks/analyse_large.py
times the same shapes (`--bad`)."""

from topology.core.analysis import analyse
from topology.core.reach import MAX_ARRIVALS

HEADER = """\
version: 1
clusters:
  east: {bootstrap: "10.0.0.1:9092"}
  west: {bootstrap: "10.0.0.2:9092"%s}
  central: {bootstrap: "10.0.0.3:9092"}
flows:
"""
RUN = "a" * 60  # with the patterns below, a backtracking engine needs about 2**60 steps


def _codes(text: str) -> list[str]:
    return [d.headline().split(": ", 1)[1] for d in analyse(text, "t.yaml").diagnostics]


def test_a_backtracking_include_is_matched_against_names_arriving_from_another_flow() -> None:
    text = HEADER % "" + (
        f"  - mirror: {{from: east, to: west}}\n    naming: identity\n"
        f"    topics: {{include: [{RUN}]}}\n"
        "  - mirror: {from: west, to: central}\n    naming: identity\n"
        '    topics: {include: ["(a+)+b", "(a|aa)*c", "(x+x+)+y"]}\n'
    )
    assert _codes(text) == []  # nothing named RUN passes the second flow, and it says so quickly


def test_a_backtracking_include_is_matched_against_a_clusters_own_topic() -> None:
    text = HEADER % f", topics: [{RUN}]" + (
        "  - mirror: {from: east, to: west}\n    naming: identity\n"
        '    topics: {include: ["(a+)+b"]}\n'
    )
    assert _codes(text) == []


def test_a_backtracking_exclude_is_matched_against_a_long_include_list() -> None:
    names = ", ".join(f"{RUN}{number}" for number in range(1_000))
    text = HEADER % "" + (
        f"  - mirror: {{from: east, to: west}}\n"
        f'    topics: {{include: [{names}], exclude: ["(a+)+b"]}}\n'
    )
    assert _codes(text) == []


def test_an_include_list_of_50000_names_is_analysed_in_linear_time() -> None:
    names = ", ".join(f"t{number:05d}" for number in range(50_000))
    text = HEADER % "" + (
        f"  - mirror: {{from: east, to: west}}\n    topics: {{include: [{names}]}}\n"
        "  - mirror: {from: west, to: central}\n"
        '    topics: {include: ["east\\\\.t0.*", t00001]}\n'
    )
    result = analyse(text, "t.yaml")
    assert result.diagnostics == ()
    assert result.reach is not None
    [direct] = result.reach.on("west")
    assert direct.names is not None and len(direct.names) == 50_000
    [onward] = [a for a in result.reach.on("central") if a.origin == "east"]
    assert onward.names is not None and len(onward.names) == 10_000  # east.t00000..east.t09999


def _mesh(size: int, naming: str) -> str:
    clusters = "".join(
        f'  c{n:03d}: {{bootstrap: "10.1.{n // 250}.{n % 250}:9092"}}\n' for n in range(size)
    )
    members = ", ".join(f"c{n:03d}" for n in range(size))
    return f"version: 1\nclusters:\n{clusters}flows:\n  - active-active: [{members}]\n" + (
        f"    naming: {naming}\n"
    )


def test_a_prefix_mesh_of_200_clusters_stops_at_the_limit_with_a_located_warning() -> None:
    # 39,800 one-hop chains, and 200! in all: far more than anyone can review.
    result = analyse(_mesh(200, "prefix"), "t.yaml")
    assert result.reach is not None and result.reach.truncated
    assert len(result.reach.arrivals) == MAX_ARRIVALS
    [limit] = [d.headline() for d in result.diagnostics if d.code == "T309"]
    assert limit.startswith("t.yaml:204:5: warning[T309]: stopped after 20000")


def test_an_identity_mesh_of_200_clusters_reaches_the_limit_quickly_too() -> None:
    # Identity meshes forward nothing they delivered, so every chain is one hop; but 39,800 of
    # them are still more than the limit, and the checks stay linear in what was found.
    result = analyse(_mesh(200, "identity"), "t.yaml")
    assert result.reach is not None and result.reach.truncated
    assert all(len(arrival.edges) == 1 for arrival in result.reach.arrivals)
    assert [d.code for d in result.diagnostics] == ["T309"]


def test_a_hub_with_480_spokes_is_analysed_in_full_without_a_t309() -> None:
    # 960 chains; the hub's 480 arrivals each have 479 edges onward that carry nothing (the
    # literal filter names `orders`, the hub receives `sN.orders`). Counting those as steps once
    # stopped the search with a false "very many multi-hop paths".
    spokes = range(480)
    clusters = "".join(f'  s{n}: {{bootstrap: "10.1.{n // 250}.{n % 250}:9092"}}\n' for n in spokes)
    flows = "".join(
        f"  - active-active: [hub, s{n}]\n    topics: {{include: ['orders']}}\n" for n in spokes
    )
    text = (
        f'version: 1\nclusters:\n  hub: {{bootstrap: "10.0.0.1:9092"}}\n{clusters}flows:\n{flows}'
    )
    result = analyse(text, "t.yaml")
    assert result.diagnostics == ()
    assert result.reach is not None and not result.reach.truncated
    assert len(result.reach.arrivals) == 960


def test_a_hub_with_regex_filters_that_reject_onward_edges_is_analysed_in_full() -> None:
    # Regex filters are not looked up by name: the hub tries 479 edges for each arrival, and
    # the step budget (every two-edge path, plus more) leaves room for all of them.
    spokes = range(300)
    clusters = "".join(f'  s{n}: {{bootstrap: "10.1.{n // 250}.{n % 250}:9092"}}\n' for n in spokes)
    flows = "".join(
        f"  - active-active: [hub, s{n}]\n    topics: {{include: ['svc{n}-.*']}}\n" for n in spokes
    )
    text = (
        f'version: 1\nclusters:\n  hub: {{bootstrap: "10.0.0.1:9092"}}\n{clusters}flows:\n{flows}'
    )
    result = analyse(text, "t.yaml")
    assert [d.code for d in result.diagnostics] == []
    assert result.reach is not None and not result.reach.truncated


def test_the_step_budget_has_its_own_message() -> None:
    from topology.core import checks, reach, resolve, source
    from topology.core import flow_graph as graph

    text = _mesh(12, "prefix").replace(
        "naming: prefix", "naming: prefix\n    topics: {include: ['x.*']}"
    )
    document, _ = source.parse(text, "t.yaml")
    topology, _ = resolve.resolve(document)
    built, _ = graph.build(topology)
    limited = reach.reach(built, limit=20)
    assert limited.truncated
    stopped = reach.Reach(limited.arrivals, True, tried=5_000, budget_spent=True)
    [warning] = [d.message for d in checks.check(built, stopped) if d.code == "T309"]
    assert warning.startswith("stopped after trying 5000 onward edges, which found 20")


def test_a_backtracking_lookaround_against_a_long_topic_name_is_a_located_t202() -> None:
    # RE2 cannot take the lookbehind, so the backtracking engine matches it, and on a run of
    # `a`s it backtracks past its time limit: an error naming the pattern, not a hang.
    text = HEADER % f", topics: [{RUN}]" + (
        "  - mirror: {from: east, to: west}\n    naming: identity\n"
        '    topics: {include: ["(a|aa)+(?<!x)b"]}\n'
    )
    [slow] = [d.headline() for d in analyse(text, "t.yaml").diagnostics]
    assert slow.startswith(
        "t.yaml:7:5: error[T202]: '(a|aa)+(?<!x)b' took too long to match topic names "
        "(it backtracks catastrophically"
    )
    assert "flows[0] (east->west) topics.include" in slow
