"""Issue 36: small inputs found by adversarial testing that hung, crashed, misreported or leaked.
Each test holds one of them; none times anything (the analysis counts its steps instead)."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import run_topo
from topology.core import budget, naming, resolve, secrets, source
from topology.core import flow_graph as graph
from topology.core.analysis import analyse
from topology.core.errors import KafkaUnavailableError
from topology.core.mm2.exporter import export
from topology.core.mm2.importer import import_properties
from topology.core.observed import Cluster
from topology.core.plan import saved
from topology.core.reach import MAX_ARRIVALS
from topology.ops.failover import Offsets

# -- 1. the analysis stays near linear in the file's size ----------------------------------------


def mesh_of_mirrors(size: int, pairs: list[tuple[int, int]], naming_: str = "identity") -> str:
    lines = ["version: 1", f"defaults: {{naming: {naming_}}}", "clusters:"]
    lines += [f"  c{n}: {{bootstrap: '127.0.0.1:{19000 + n}'}}" for n in range(size)]
    lines += ["flows:", *(f"  - mirror: {{from: c{i}, to: c{j}}}" for i, j in pairs)]
    return "\n".join(lines) + "\n"


def every_pair(size: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(size) for j in range(size) if i != j]


def codes(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for diagnostic in analyse(text, "t.yaml").diagnostics:
        found[diagnostic.code] = found.get(diagnostic.code, 0) + 1
    return found


def test_seven_clusters_mirrored_each_way_are_analysed_in_full() -> None:
    # 1.6 KB, 13,692 chains: once a pairwise comparison of millions, now 252 kinds of chain.
    text = mesh_of_mirrors(7, every_pair(7))
    result = analyse(text, "t.yaml")
    assert result.reach is not None and not result.reach.truncated
    assert len(result.reach.arrivals) == 13_692
    assert codes(text) == {"T304": 210}
    assert result.steps is not None and not result.steps.spent


def test_six_clusters_report_what_they_reported_before() -> None:
    assert codes(mesh_of_mirrors(6, every_pair(6))) == {"T304": 120}


def test_twelve_clusters_mirrored_forward_report_every_collision() -> None:
    text = mesh_of_mirrors(12, [(i, j) for i in range(12) for j in range(12) if i < j])
    assert codes(text) == {"T304": 385}


def test_distinct_filters_on_every_flow_stop_at_the_budget_and_say_so() -> None:
    # Every chain is of its own kind here, so the checks run out of steps; what they found
    # before is kept, and T309 says the report may be missing collisions.
    pairs = every_pair(8)
    text = mesh_of_mirrors(8, pairs).replace(
        "\n  - mirror", "\n  - topics: {include: ['t.*'], exclude: ['xNN']}\n    mirror"
    )
    for number in range(len(pairs)):
        text = text.replace("xNN", f"x{number}", 1)
    result = analyse(text, "t.yaml")
    [stopped] = [d for d in result.diagnostics if d.code == "T309"]
    assert "stopped the checks after" in stopped.message
    assert any(d.code == "T304" for d in result.diagnostics)
    assert result.steps is not None and result.steps.spent


def test_an_active_active_of_2000_defined_clusters_is_refused_before_it_is_built() -> None:
    names = [f"k{n}" for n in range(2_000)]
    text = "version: 1\nclusters:\n" + "".join(f"  {n}: {{bootstrap: 'h:1'}}\n" for n in names)
    text += f"flows:\n  - active-active: [{', '.join(names)}]\n"
    result = analyse(text, "t.yaml")
    assert [d.code for d in result.diagnostics] == ["T310"]
    assert "3,998,000 replication edges" in result.diagnostics[0].message
    assert result.graph is None and result.reach is None  # graph, diff, review: "does not analyse"


@pytest.mark.parametrize("size", [2_000, 10_000])
def test_an_active_active_of_undefined_clusters_builds_no_edge(size: int) -> None:
    members = ", ".join(f"u{n}" for n in range(size))
    text = (
        "version: 1\nclusters:\n  east: {bootstrap: 'h:1'}\n  west: {bootstrap: 'h:2'}\n"
        f"flows:\n  - active-active: [{members}]\n"
    )
    document, _ = source.parse(text, "t.yaml")
    topology, _ = resolve.resolve(document)
    steps = budget.Steps.for_text(text)
    built, found = graph.build(topology, steps)
    assert steps.taken == 0 and built.edges() == []
    assert len(found) == size and all(d.code == "T201" for d in found)
    # The list of clusters and the suggestions are bounded too.
    assert all(len(d.message) < 300 for d in found)


_FILTERS = ["'.*'", "'t.*'", "orders", "'x.*'"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.integers(min_value=2, max_value=9),
    edges=st.sets(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=1, max_size=60),
    naming_=st.sampled_from(["identity", "prefix"]),
    filters=st.lists(st.sampled_from(_FILTERS), min_size=1, max_size=60),
)
def test_the_analysis_never_does_more_work_than_its_budget_allows(
    size: int, edges: set[tuple[int, int]], naming_: str, filters: list[str]
) -> None:
    """Any graph: the steps counted stay within the budget (plus one step's worth of overshoot,
    at most the chains the search may find), and a budget spent is said (T309 or T310)."""
    pairs = sorted((i % size, j % size) for i, j in edges if i % size != j % size)
    if not pairs:
        return
    text = mesh_of_mirrors(size, pairs, naming_)
    for number in range(len(pairs)):
        include = filters[number % len(filters)]
        text = text.replace(
            f"\n  - mirror: {{from: c{pairs[number][0]}, to: c{pairs[number][1]}}}\n",
            f"\n  - mirror: {{from: c{pairs[number][0]}, to: c{pairs[number][1]}}}\n"
            f"    topics: {{include: [{include}]}}\n",
            1,
        )
    result = analyse(text, "t.yaml")
    assert result.steps is not None
    assert result.steps.budget == budget.BASE_STEPS + budget.STEPS_PER_BYTE * len(text)
    assert result.steps.taken <= result.steps.budget + MAX_ARRIVALS
    if result.steps.spent:
        assert {d.code for d in result.diagnostics} & {"T309", "T310"}


# -- 2. a large saved plan is checked against its schema without testing every condition ---------


def test_each_change_is_checked_against_the_schema_of_its_kind_with_the_same_answers() -> None:
    from tests.unit.test_saved_plan import document

    data = document()
    # The whole schema and the per-kind one agree on every change of a real plan ...
    assert saved._schema_problem(data) is None
    # ... and on broken ones, which are placed at the same path.
    for change, field, value in [(0, "after", {"partitions": "three"}), (1, "cluster", "")]:
        broken = json.loads(json.dumps(data))
        broken["changes"][change][field] = value
        whole = saved._best(saved._validator(), broken)
        each = saved._schema_problem(broken)
        assert whole is not None and each is not None
        assert list(each.absolute_path)[:2] == ["changes", change]
        assert list(each.absolute_path) == list(whole.absolute_path)
    # A value checked once stands for an equal value only: the string "3" is not the number 3.
    twice = json.loads(json.dumps(data))
    first = twice["changes"][0]
    assert first["action"] == "create" and first["resource"] == "topic"
    second = json.loads(json.dumps(first))
    first["after"]["partitions"], second["after"]["partitions"] = 3, "3"
    twice["changes"][1:1] = [second]
    problem = saved._schema_problem(twice)
    assert problem is not None and list(problem.absolute_path)[:4] == [
        "changes",
        1,
        "after",
        "partitions",
    ]
    junk = {**data, "changes": [*data["changes"], {"action": 1}]}
    problem = saved._schema_problem(junk)
    last = len(data["changes"])
    assert problem is not None and list(problem.absolute_path)[:2] == ["changes", last]


def test_nesting_is_measured_at_c_speed_and_exactly_where_it_is_too_deep() -> None:
    assert saved._too_deep('{"a": [' + "[" * 99 + "]" * 99 + "]}") is None
    assert saved._too_deep('{"a": "[[[[", "b": [' + "[" * 98 + "]" * 98 + "]}") is None
    assert saved._too_deep("{\n" + "[" * 101 + "]" * 101 + "}") == (2, 100)
    assert saved._too_deep('{"a": "é", "b": [' + "[" * 101) == (1, 116)


# -- 3. secret files are small regular files ------------------------------------------------------


def _resolve(path: Path, roots: list[Path] | None = None) -> str:
    def reader(p: Path) -> str:
        return secrets.read_secret_file(p, roots)

    return secrets.resolve(
        f"${{file:{path}}}", cluster="east", setting="password", environ={}, read_file=reader
    )


def test_a_device_a_pipe_a_folder_or_a_large_file_is_refused_in_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody writes it: opened without blocking, refused at once
    large = tmp_path / "large"
    large.write_bytes(b"x" * (secrets.MAX_SECRET_FILE_BYTES + 1))
    cases = {
        Path("/dev/zero"): "a device or pipe, not a regular file",
        fifo: "a device or pipe, not a regular file",
        tmp_path: "a folder, not a regular file",
        large: "larger than a secret file may be (64 KiB)",
    }
    for path, said in cases.items():
        with pytest.raises(secrets.SecretError) as raised:
            _resolve(path)
        assert str(raised.value) == f"cluster east: password needs file {path}, which is {said}"


def test_a_small_file_is_read_and_roots_bound_where_from(tmp_path: Path) -> None:
    inside = tmp_path / "repo" / "secret.txt"
    inside.parent.mkdir()
    inside.write_text("s3cr3t\n")
    link = tmp_path / "repo" / "escape"
    link.symlink_to(tmp_path / "outside.txt")
    (tmp_path / "outside.txt").write_text("runner's\n")
    assert _resolve(inside) == "s3cr3t"
    assert _resolve(inside, [tmp_path / "repo"]) == "s3cr3t"
    with pytest.raises(secrets.SecretError, match="outside the folders secret files may be read"):
        _resolve(link, [tmp_path / "repo"])  # a symbolic link out of the repository


def test_plan_with_dev_zero_as_a_password_ends_in_one_line(tmp_path: Path) -> None:
    topology = tmp_path / "t.yaml"
    topology.write_text(
        "version: 1\nclusters:\n  east: {bootstrap: '127.0.0.1:1', security: {protocol: "
        "SASL_PLAINTEXT, sasl: {mechanism: PLAIN, username: u, password: '${file:/dev/zero}'}}}\n"
        "  west: {bootstrap: '127.0.0.1:2'}\nflows:\n  - mirror: {from: east, to: west}\n"
    )
    done = run_topo("plan", str(topology))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "error: cluster east: security.sasl.password needs file /dev/zero, which is a device "
        "or pipe, not a regular file"
    )


def test_the_cli_reads_secret_files_only_under_the_roots_it_is_given(tmp_path: Path) -> None:
    from topology.cli.files import SECRET_FILE_ROOTS, secret_file_reader

    (tmp_path / "ok").write_text("x")
    os.environ[SECRET_FILE_ROOTS] = str(tmp_path / "elsewhere")
    try:
        with pytest.raises(secrets.NotASecretFileError, match="outside the folders"):
            secret_file_reader()(tmp_path / "ok")
    finally:
        del os.environ[SECRET_FILE_ROOTS]
    assert secret_file_reader()(tmp_path / "ok") == "x"


# -- 4. two crashes -------------------------------------------------------------------------------


def test_export_of_a_topology_without_flows_writes_its_clusters(tmp_path: Path) -> None:
    text = "version: 1\nclusters:\n  east: {bootstrap: '127.0.0.1:1'}\nflows: []\n"
    result = analyse(text, "t.yaml")
    assert result.topology is not None and result.ok
    exported = export(result.topology, "t.yaml")
    assert "east.bootstrap.servers = 127.0.0.1:1" in exported.text
    topology = tmp_path / "t.yaml"
    topology.write_text(text)
    done = run_topo("export", "mm2", str(topology))
    assert done.returncode == 0, done.stderr


def test_apply_of_a_plan_naming_a_folder_as_its_topology_is_one_line(tmp_path: Path) -> None:
    from tests.unit.test_saved_plan import document, resigned, text_of

    data = document()
    data["topology"]["file"] = "."
    plan = tmp_path / "plan.json"
    plan.write_text(text_of(resigned(data)))
    done = subprocess_in(tmp_path, "apply", "plan.json", "--allow-delete")
    assert done.returncode == 1, done.stderr
    assert (
        done.stderr.strip() == "error: .: not a regular file, so not the topology plan.json names"
    )


def subprocess_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = "from topology.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=folder, capture_output=True, text=True, check=False
    )


# -- 5. diff errors have a place ------------------------------------------------------------------


def test_diff_says_where_heads_error_is(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text(
        "version: 1\nclusters:\n  east: {bootstrap: 'h:1'}\n  west: {bootstrap: 'h:2'}\n"
        "flows:\n  - mirror: {from: east, to: west}\n"
    )
    head = tmp_path / "head.yaml"
    head.write_text(base.read_text() + "  - mirror: {from: east, to: nowhere}\n")
    done = run_topo("diff", str(base), str(head), "--format", "json")
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"{head}:7:5: error[T201]: flows[1] names cluster 'nowhere', which is not under clusters"
    )
    json.loads(done.stdout)  # stdout is still the diff, whole


# -- 6. no success reported on failure; clusters asked at once ------------------------------------


def test_status_with_no_cluster_reachable_is_an_error(tmp_path: Path) -> None:
    topology = tmp_path / "t.yaml"
    topology.write_text(
        "version: 1\nengine: {runner: none}\nclusters:\n  east: {bootstrap: '127.0.0.1:1'}\n"
        "  west: {bootstrap: '127.0.0.1:2'}\nflows:\n  - mirror: {from: east, to: west}\n"
    )
    done = run_topo("status", str(topology))
    assert done.returncode == 1
    assert "not running" not in done.stdout
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: cluster ") and "unreachable" in line


def test_offsets_and_failover_ask_every_cluster_at_once() -> None:
    """Each observe waits until all 12 are asked: one after another, this would never end
    (the barrier breaks after 30 s and the test fails)."""
    clusters = "".join(f"  c{n}: {{bootstrap: '127.0.0.1:{n + 1}'}}\n" for n in range(12))
    text = f"version: 1\nclusters:\n{clusters}flows:\n  - mirror: {{from: c0, to: c1}}\n"
    result = analyse(text, "t.yaml")
    assert result.topology is not None
    everyone = threading.Barrier(12, timeout=30)

    class Unreachable:
        def observe(self, name: str, config: dict[str, str]) -> Cluster:
            everyone.wait()
            raise KafkaUnavailableError(f"cluster {name} is unreachable")

    configs: dict[str, dict[str, str]] = {name: {} for name in result.topology.clusters}
    offsets = Offsets(result.topology, configs, lambda line: None, Unreachable())  # type: ignore[arg-type]
    assert sorted(offsets.down) == sorted(configs)


# -- 7. secrets and terminals in `import mm2` -----------------------------------------------------


def test_a_vault_approle_secret_id_is_a_secret() -> None:
    assert secrets.is_secret_key("config.providers.vault.param.secret.id")
    assert secrets.is_secret_key("client.secret.id")
    assert not secrets.is_secret_key("sasl.oauthbearer.client.id")
    assert not secrets.is_secret_key("secret.provider.id")


VAULT = (
    "clusters = a, b\na.bootstrap.servers = h:1\nb.bootstrap.servers = h:2\n"
    "a->b.enabled = true\nconfig.providers = vault\n"
    "config.providers.vault.class = com.github.jcustenborder.kafka.config.vault."
    "VaultConfigProvider\n"
    "config.providers.vault.param.secret.id = s3cr3t-approle\n"
    "a.\x1b]0;pwned\x07x\x00y.password = ${env:P}\n"
)


def test_import_prints_neither_the_secret_id_nor_a_terminal_escape(tmp_path: Path) -> None:
    source_file = tmp_path / "mm2.properties"
    source_file.write_text(VAULT)
    done = run_topo("import", "mm2", str(source_file))
    everything = done.stdout + done.stderr
    assert "s3cr3t-approle" not in everything
    assert "\x1b" not in everything and "\x07" not in everything and "\x00" not in everything
    assert "  P  cluster a: \\x1b]0;pwned\\x07x\\x00y.password" in done.stderr
    result = import_properties(VAULT, "mm2.properties")
    assert "s3cr3t-approle" not in result.shown_text


# -- 8. export -> import gives back what it started from -------------------------------------------


def test_a_client_id_survives_the_round_trip() -> None:
    text = (
        "version: 1\nclusters:\n  a1: {bootstrap: 'h:1', client: {client.id: x}}\n"
        "  b1: {bootstrap: 'h:2'}\nflows:\n  - mirror: {from: a1, to: b1}\n"
    )
    result = analyse(text, "t.yaml")
    assert result.topology is not None
    exported = export(result.topology, "t.yaml").text
    assert "a1.client.id" not in exported
    for role in ("admin", "consumer", "producer"):
        assert f"a1.{role}.client.id = x" in exported
    back = import_properties(exported, "mm2.properties")
    assert back.data is not None
    assert back.data["clusters"]["a1"]["client"] == {"client.id": "x"}
    assert not [d for d in back.diagnostics if d.code == "M009"]


def test_per_role_settings_that_differ_stay_not_imported() -> None:
    text = (
        "clusters = a, b\na.bootstrap.servers = h:1\nb.bootstrap.servers = h:2\n"
        "a->b.enabled = true\na.admin.client.id = x\na.consumer.client.id = y\n"
        "a.producer.client.id = x\n"
    )
    back = import_properties(text, "mm2.properties")
    assert back.data is not None and "client" not in back.data["clusters"]["a"]
    assert len([d for d in back.diagnostics if d.code == "M009"]) == 3


# -- 10. MM2's checkpoints topic under another separator ------------------------------------------


def test_internal_topic_names_follow_mm2s_default_replication_policy() -> None:
    assert naming.checkpoints_topic("primary", ".") == "primary.checkpoints.internal"
    assert naming.checkpoints_topic("primary", "__") == "primary__checkpoints__internal"
    assert naming.checkpoints_topic("primary", "__", False) == "primary.checkpoints.internal"
    # topo's own, alike: `.internal` at the end, which every replicator skips
    assert naming.topo_checkpoints_topic("primary", "__") == "topo-checkpoints__primary.internal"
    assert naming.offset_syncs_topic("primary", "__") == "topo-offset-syncs__primary.internal"
    assert naming.topo_checkpoints_topic("primary", ".") == "topo-checkpoints.primary.internal"
    assert naming.offset_syncs_topic("primary", ".") == "topo-offset-syncs.primary.internal"
    # MM2's isInternalTopic under `__`: never copied by a flow.
    assert naming.is_internal("primary__checkpoints__internal", "__")
    assert naming.is_internal("mm2-offset-syncs__primary__internal", "__")
    assert not naming.is_internal("orders__internal", "__")
    assert not naming.is_internal("primary__checkpoints__internal", "__", False)


def test_import_carries_the_internal_separator_setting_and_export_writes_it() -> None:
    text = (
        "clusters = a, b\na.bootstrap.servers = h:1\nb.bootstrap.servers = h:2\n"
        "a->b.enabled = true\nreplication.policy.separator = __\n"
        "replication.policy.internal.topic.separator.enabled = false\n"
    )
    back = import_properties(text, "mm2.properties")
    assert back.data is not None
    assert back.data["defaults"]["internal_separator"] is False
    assert not [d for d in back.diagnostics if "internal.topic.separator" in d.message]
    topology = analyse(
        "version: 1\ndefaults: {separator: '__', internal_separator: false}\nclusters:\n"
        "  a: {bootstrap: 'h:1'}\n  b: {bootstrap: 'h:2'}\nflows:\n  - mirror: {from: a, to: b}\n",
        "t.yaml",
    ).topology
    assert topology is not None
    [edge] = topology.edges()
    assert ("b", "a.checkpoints.internal", "checkpoints") in naming.internal_topics(edge, True)
    exported = export(topology, "t.yaml").text
    assert "replication.policy.internal.topic.separator.enabled = false" in exported
