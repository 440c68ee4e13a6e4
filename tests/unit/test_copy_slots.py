"""Copy slots as settings (docs/engine.md, Copy slots): a flow's `tasks`, what the jobs document
carries of it, the transactional ids it needs, and the Spark settings slots run with."""

from topology.core.analysis import analyse
from topology.core.jobs import document, read_document, specs_of
from topology.core.model import Topology
from topology.core.naming import LOOP_TASKS
from topology.spark.conf import SLOT_PLUGIN, SPARE_SLOTS, local_master, with_slot_plugin

TOPOLOGY = """\
version: 1
clusters:
  east: {bootstrap: "east:9092"}
  west: {bootstrap: "west:9092"}
defaults:
  tasks: 3
flows:
  - mirror: {from: east, to: west}
    tasks: 8
  - mirror: {from: west, to: east}
"""


def _topology(text: str = TOPOLOGY) -> Topology:
    analysis = analyse(text, "shop.yaml")
    assert analysis.ok and analysis.topology is not None, analysis.diagnostics
    return analysis.topology


def test_a_flows_tasks_win_over_the_defaults_and_travel_in_the_jobs_document() -> None:
    specs = {spec.flow: spec for spec in specs_of(_topology())}
    assert (specs["east->west"].slots, specs["west->east"].slots) == (8, 3)
    read = read_document(document(_topology(), 1.0).to_dict())
    assert {spec.flow: spec.tasks for spec in read.specs} == {"east->west": 8, "west->east": 3}


def test_without_tasks_a_flow_has_the_default_and_its_spec_is_unchanged() -> None:
    plain = _topology(TOPOLOGY.replace("defaults:\n  tasks: 3\n", "").replace("    tasks: 8\n", ""))
    spec = specs_of(plain)[0]
    assert spec.tasks is None and spec.slots == LOOP_TASKS
    assert "tasks" not in spec.to_dict()  # a driver started before slots were a setting: equal


def test_a_count_of_slots_below_one_is_refused_at_its_line() -> None:
    found = analyse(TOPOLOGY.replace("tasks: 8", "tasks: 0"), "shop.yaml").diagnostics
    assert [(d.code, d.span.line) for d in found] == [("T104", 9)]


def test_slots_reach_their_leader_through_topos_plugin_beside_the_users() -> None:
    given = with_slot_plugin({"spark.plugins": "com.example.Audit", "spark.speculation": "true"})
    assert given["spark.plugins"] == f"com.example.Audit,{SLOT_PLUGIN}"
    assert given["spark.speculation"] == "false"  # a speculative slot would be a second writer
    assert with_slot_plugin(given)["spark.plugins"] == given["spark.plugins"]  # once


def test_the_local_runner_counts_slots_not_cores() -> None:
    assert local_master("local[*]", slots=6, cores=2) == f"local[{2 + 6 + SPARE_SLOTS}]"
    assert local_master("local", slots=2, cores=4) == f"local[{4 + 2 + SPARE_SLOTS}]"
    assert local_master("local[12]", slots=6, cores=2) == "local[12]"  # stated: kept


def test_a_flow_counts_its_edges_as_it_makes_them() -> None:
    mesh = _topology(TOPOLOGY.replace("  - mirror: {from: west, to: east}\n", "")).flows[0]
    assert mesh.edge_count == len(mesh.edges()) == 1
    three = analyse(
        TOPOLOGY.replace("flows:\n", "flows:\n  - active-active: [east, west, north]\n").replace(
            "clusters:\n", 'clusters:\n  north: {bootstrap: "north:9092"}\n'
        ),
        "shop.yaml",
    ).topology
    assert three is not None
    assert [f.edge_count for f in three.flows] == [len(f.edges()) for f in three.flows] == [6, 1, 1]
