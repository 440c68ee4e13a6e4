"""Copy slots as settings (docs/engine.md, Copy slots): a flow's `tasks`, what the jobs document
carries of it, how a flow without it is sized (`core.copy_slots`), and the Spark settings slots
run with."""

from topology.core.analysis import analyse
from topology.core.copy_slots import Wanted, local_cores, offered, said, sized, stated_cores
from topology.core.jobs import document, read_document, specs_of
from topology.core.model import Engine, Topology
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
    assert (specs["east->west"].tasks, specs["west->east"].tasks) == (8, 3)
    read = read_document(document(_topology(), 1.0).to_dict())
    assert {spec.flow: spec.tasks for spec in read.specs} == {"east->west": 8, "west->east": 3}


def test_without_tasks_a_flow_is_sized_and_its_spec_is_unchanged() -> None:
    plain = _topology(TOPOLOGY.replace("defaults:\n  tasks: 3\n", "").replace("    tasks: 8\n", ""))
    spec = specs_of(plain)[0]
    assert spec.tasks is None  # sized as the driver starts it: not part of what restarts it
    assert "tasks" not in spec.to_dict()  # a driver started before slots were a setting: equal


def test_a_flow_alone_gets_a_slot_per_core_up_to_its_partitions() -> None:
    assert sized({"a": Wanted(None, 600)}, cores=16) == {"a": 16}
    assert sized({"a": Wanted(None, 6)}, cores=16) == {"a": 6}
    assert sized({"a": Wanted(None, 600)}, cores=2) == {"a": 2}
    assert sized({"a": Wanted(None, 6000)}, cores=1000) == {"a": 256}  # as `tasks` may say
    # room for topics that come later: two slots on a flow of one partition, or none yet
    assert sized({"a": Wanted(None, 1)}, cores=16) == {"a": 2}
    assert sized({"a": Wanted(None, 0)}, cores=1) == {"a": 1}


def test_flows_share_the_cores_by_their_partitions_and_each_gets_one() -> None:
    shared = sized({"big": Wanted(None, 300), "small": Wanted(None, 100)}, cores=8)
    assert shared == {"big": 6, "small": 2}
    # more flows than cores: one each, the cores over-asked rather than a flow left out
    assert sized({f: Wanted(None, 50) for f in "abc"}, cores=2) == {"a": 1, "b": 1, "c": 1}
    # a tie goes to the first name, the same on every machine
    assert sized({"b": Wanted(None, 4), "a": Wanted(None, 4)}, cores=3) == {"a": 2, "b": 1}


def test_stated_counts_are_kept_and_take_their_cores_first() -> None:
    wanted = {"pinned": Wanted(6, 2), "sized": Wanted(None, 100)}
    assert sized(wanted, cores=8) == {"pinned": 6, "sized": 2}
    assert sized(wanted, cores=4) == {"pinned": 6, "sized": 1}  # nothing left: one
    # a flow whose partitions cap its slots leaves the rest to the others
    capped = sized({"few": Wanted(None, 3), "many": Wanted(None, 10)}, cores=12)
    assert capped == {"few": 3, "many": 9}


def test_the_cores_come_from_the_master_or_the_clusters_stated_size() -> None:
    assert offered(Engine(), machine=8) == 8  # local[*]: this machine's
    assert offered(Engine(master="local[4]"), machine=8) == 4
    assert local_cores("local[16]", machine=2) == 2  # threads past the cores copy no faster
    cluster = Engine(runner="spark", master="spark://m:7077")
    assert offered(cluster, machine=8) is None  # learnt when the driver starts
    assert stated_cores(Engine("spark", "spark://m:7077", {"spark.cores.max": "12"})) == 12
    instances = {"spark.executor.instances": "3", "spark.executor.cores": "4"}
    assert stated_cores(Engine("spark", "spark://m:7077", instances)) == 12
    dynamic = {
        "spark.dynamicAllocation.enabled": "true",
        "spark.dynamicAllocation.maxExecutors": "5",
        "spark.executor.instances": "3",
        "spark.executor.cores": "2",
    }
    assert stated_cores(Engine("spark", "spark://m:7077", dynamic)) == 10
    assert stated_cores(Engine("spark", "spark://m:7077", {"spark.cores.max": "lots"})) is None


def test_the_plan_says_the_count_and_what_it_was_sized_from() -> None:
    assert said(Wanted(None, 600), 2, 2) == "2 copy slots sized from 600 partitions and 2 cores"
    assert said(Wanted(None, 1), 1, 1) == "1 copy slot sized from 1 partition and 1 core"
    assert said(Wanted(4, 600), 4, 2) == "4 copy slots"
    assert said(Wanted(None, 6), None, None) == (
        "copy slots sized at start from 6 partitions and the cores Spark offers"
    )


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


def test_a_stated_local_master_needs_one_slot_per_sized_flow_at_least() -> None:
    mesh = 'version: 1\nengine: {master: "local[N]"}\nclusters:\n  east: {bootstrap: "e:1"}\n'
    mesh += '  west: {bootstrap: "w:1"}\nflows:\n  - active-active: [east, west]\n'
    assert analyse(mesh.replace("N", "2"), "t.yaml").ok  # sized within the count: one each
    found = analyse(mesh.replace("N", "1"), "t.yaml").diagnostics
    assert [d.code for d in found] == ["T211"] and "need 2" in found[0].message
