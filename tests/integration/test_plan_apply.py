"""`topo plan` and `topo apply` against real lab clusters, run as a user runs them.

Every test writes its own topology (its own name, so its own ownership records) whose filter
admits only topics with the test's unique prefix: tests share the session's two clusters
without seeing each other's topics.
"""

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import run_topo
from topology.core import observed
from topology.core.plan.values import Action, Change, Resource
from topology.kafka import changes, inventory, records

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parents[2]
PLAN_SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas/plan.schema.json").read_text()))


class Setup:
    """One test's topology file, its topic prefix and the lab clusters' client configs."""

    def __init__(self, folder: Path, lab: dict[str, dict[str, str]]) -> None:
        self.prefix = f"pa{uuid.uuid4().hex[:8]}"
        self.folder = folder
        self.source = lab[SOURCE_CLUSTER]
        self.target = lab[TARGET_CLUSTER]
        self.file = folder / f"{self.prefix}.yaml"
        self.write()

    def write(self, include: str | None = None, extra: str = "") -> None:
        include = include or f"{self.prefix}-.*"
        self.file.write_text(
            f"version: 1\n"
            f"engine: {{runner: none}}  # topics and ACLs only: no replication jobs here\n"
            f"clusters:\n"
            f'  src: {{bootstrap: "{self.source["bootstrap.servers"]}"}}\n'
            f'  dst: {{bootstrap: "{self.target["bootstrap.servers"]}"}}\n'
            f"flows:\n"
            f"  - mirror: {{from: src, to: dst}}\n"
            f'    topics: {{include: ["{include}"]}}\n'
            f"{extra}"
        )

    def topic(self, suffix: str) -> str:
        return f"{self.prefix}-{suffix}"

    def topo(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        if stdin is None:
            return run_topo(*args)
        code = "from topology.cli import main; main()"
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
            cwd=self.folder,
        )

    def plan_json(self, *flags: str) -> dict[str, Any]:
        done = self.topo("plan", str(self.file), "--format", "json", *flags)
        assert done.returncode == 0, done.stderr
        plan: dict[str, Any] = json.loads(done.stdout)
        PLAN_SCHEMA.validate(plan)
        return plan

    def data_changes(self, plan: dict[str, Any]) -> list[tuple[str, str, str]]:
        """(action, resource, name) of the changes about this test's own topics."""
        return [
            (c["action"], c["resource"], c["name"])
            for c in plan["changes"]
            if self.prefix in c["name"]
        ]

    def apply(self, *flags: str) -> None:
        done = self.topo("apply", str(self.file), "--auto-approve", *flags)
        assert done.returncode == 0, done.stdout + done.stderr

    def target_topic(self, name: str) -> observed.Topic | None:
        return inventory.observe("dst", self.target).topics.get(name)


@pytest.fixture
def setup(tmp_path: Path, lab: dict[str, dict[str, str]]) -> Setup:
    return Setup(tmp_path, lab)


def alter(config: dict[str, str], change: Change) -> None:
    """Change a source topic the way an operator would (through topo's own admin step)."""
    changes.execute(config, change)


def test_apply_creates_the_copies_and_the_next_plan_shows_exactly_a_source_change(
    setup: Setup,
) -> None:
    orders, excluded = setup.topic("orders"), setup.topic("audit.internal")
    records.create_topic(setup.source, orders, 3)
    records.create_topic(setup.source, excluded, 1)
    alter(
        setup.source,
        Change(
            Action.UPDATE,
            Resource.TOPIC_CONFIG,
            "src",
            orders,
            "test",
            before={"retention.ms": None},
            after={"retention.ms": "3600000"},
        ),
    )
    records.create_topic(setup.target, setup.topic("local"), 2)  # the target's own topic

    shown = setup.topo("plan", str(setup.file), "--detailed-exitcode")
    assert shown.returncode == 2, shown.stderr
    assert f"+ topic src.{orders}" in shown.stdout
    assert excluded not in shown.stdout and setup.topic("local") not in shown.stdout
    assert setup.data_changes(setup.plan_json()) == [("create", "topic", f"src.{orders}")]

    setup.apply()
    copy = setup.target_topic(f"src.{orders}")
    assert copy is not None
    assert (copy.partitions, dict(copy.configs)) == (3, {"retention.ms": "3600000"})
    assert setup.target_topic(f"src.{excluded}") is None
    again = setup.topo("plan", str(setup.file), "--detailed-exitcode")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "No changes" in again.stdout

    # Someone changes the source: the next plan shows exactly that, old -> new.
    alter(
        setup.source,
        Change(
            Action.UPDATE,
            Resource.PARTITIONS,
            "src",
            orders,
            "test",
            before={"partitions": 3},
            after={"partitions": 4},
        ),
    )
    alter(
        setup.source,
        Change(
            Action.UPDATE,
            Resource.TOPIC_CONFIG,
            "src",
            orders,
            "test",
            before={"retention.ms": "3600000"},
            after={"retention.ms": "7200000"},
        ),
    )
    plan = setup.plan_json()
    drift = [c for c in plan["changes"] if setup.prefix in c["name"]]
    assert [(c["resource"], c["before"], c["after"]) for c in drift] == [
        ("partitions", {"partitions": 3}, {"partitions": 4}),
        ("topic_config", {"retention.ms": "3600000"}, {"retention.ms": "7200000"}),
    ]
    text = setup.topo("plan", str(setup.file)).stdout
    assert '"3600000" → "7200000"' in text and "3 → 4" in text
    setup.apply()
    copy = setup.target_topic(f"src.{orders}")
    assert copy is not None
    assert (copy.partitions, dict(copy.configs)) == (4, {"retention.ms": "7200000"})
    assert setup.data_changes(setup.plan_json()) == []


def test_a_saved_plan_applies_exactly_once_and_a_stale_one_is_refused(setup: Setup) -> None:
    first, second = setup.topic("first"), setup.topic("second")
    records.create_topic(setup.source, first, 1)
    saved = setup.folder / "plan.json"
    assert setup.topo("plan", str(setup.file), "-o", str(saved)).returncode == 0
    PLAN_SCHEMA.validate(json.loads(saved.read_text()))

    records.create_topic(setup.source, second, 1)  # the clusters move on
    stale = setup.topo("apply", str(saved))
    assert stale.returncode == 1
    assert "stale plan" in stale.stderr and "Traceback" not in stale.stderr
    assert setup.target_topic(f"src.{first}") is None  # nothing was applied

    assert setup.topo("plan", str(setup.file), "-o", str(saved)).returncode == 0
    done = setup.topo("apply", str(saved))
    assert done.returncode == 0, done.stderr
    assert setup.target_topic(f"src.{first}") and setup.target_topic(f"src.{second}")
    assert "stale plan" in setup.topo("apply", str(saved)).stderr  # it was used up

    assert setup.topo("plan", str(setup.file), "-o", str(saved)).returncode == 0
    setup.write(extra="    replication_factor: 1\n")
    edited = setup.topo("apply", str(saved))
    assert edited.returncode == 1 and "changed after" in edited.stderr


def test_apply_asks_first_and_refuses_to_ask_without_a_terminal(setup: Setup) -> None:
    orders = setup.topic("orders")
    records.create_topic(setup.source, orders, 1)
    refused = setup.topo("apply", str(setup.file), stdin="yes\n")
    assert refused.returncode == 1
    assert "standard input is not a terminal" in refused.stderr
    dry = setup.topo("apply", str(setup.file), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"create topic src.{orders}" in dry.stdout and "Nothing was changed" in dry.stdout
    assert setup.target_topic(f"src.{orders}") is None


def test_orphans_are_kept_until_deletes_are_allowed(setup: Setup) -> None:
    keep, drop = setup.topic("keep"), setup.topic("drop")
    records.create_topic(setup.source, keep, 1)
    records.create_topic(setup.source, drop, 1)
    setup.apply()
    setup.write(include=keep)  # the flow no longer admits `drop`

    plan = setup.plan_json()
    assert setup.data_changes(plan) == []
    assert any(
        n["name"] == f"src.{drop}" and "--allow-delete" in n["message"] for n in plan["notes"]
    )
    deleting = setup.plan_json("--allow-delete")
    assert setup.data_changes(deleting) == [("delete", "topic", f"src.{drop}")]
    text = setup.topo("plan", str(setup.file), "--allow-delete").stdout
    assert "DELETES" in text or "deletes" in text

    setup.apply("--allow-delete")
    assert setup.target_topic(f"src.{drop}") is None
    assert setup.target_topic(f"src.{keep}") is not None
    assert setup.data_changes(setup.plan_json("--allow-delete")) == []


def test_an_unreachable_cluster_is_one_line_naming_it(setup: Setup) -> None:
    setup.file.write_text(
        setup.file.read_text().replace(setup.target["bootstrap.servers"], "127.0.0.1:9")
    )
    done = setup.topo("plan", str(setup.file))
    assert done.returncode == 1
    [line] = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "dst" in line and "127.0.0.1:9" in line
    assert "Traceback" not in done.stderr


FLAKY_CLUSTER = "itest-flaky"


def test_a_cluster_lost_during_apply_is_reported_and_a_rerun_converges(
    setup: Setup, lab_dir: Path
) -> None:
    from topology.cli import live
    from topology.core.plan import execute as applying
    from topology.core.plan.execute import Outcome
    from topology.lab import manager

    manager.up([manager.UpRequest(FLAKY_CLUSTER)])
    flaky = manager.admin_config(FLAKY_CLUSTER)
    setup.write(
        extra=(
            f'  - mirror: {{from: src, to: far}}\n    topics: {{include: ["{setup.prefix}-.*"]}}\n'
        )
    )
    setup.file.write_text(
        setup.file.read_text().replace(
            "flows:", f'  far: {{bootstrap: "{flaky["bootstrap.servers"]}"}}\nflows:'
        )
    )
    orders = setup.topic("orders")
    records.create_topic(setup.source, orders, 2)
    loaded = live.load(str(setup.file))
    configs = live.client_configs(loaded)
    plan = live.make_plan(loaded, live.observe(configs), allow_delete=False)
    manager.down([FLAKY_CLUSTER])  # lost after planning, before apply reaches it

    report = applying.run(
        plan, lambda c: changes.execute(configs[c.cluster], c, timeout=5, owner=plan.owner)
    )
    outcomes = {(s.change.cluster, s.outcome) for s in report.steps}
    assert (("dst", Outcome.DONE) in outcomes) and ("dst", Outcome.FAILED) not in outcomes
    far = [s for s in report.steps if s.change.cluster == "far"]
    assert far[0].outcome is Outcome.FAILED and "127.0.0.1" in far[0].detail
    assert {s.outcome for s in far[1:]} == {Outcome.NOT_ATTEMPTED}
    assert not report.ok
    assert setup.target_topic(f"src.{orders}") is not None

    manager.up([manager.UpRequest(FLAKY_CLUSTER)])
    rerun = setup.topo("apply", str(setup.file), "--auto-approve")
    assert rerun.returncode == 0, rerun.stderr
    assert f"src.{orders}" in rerun.stdout and "topo-state.internal" in rerun.stdout
    assert setup.topo("plan", str(setup.file), "--detailed-exitcode").returncode == 0
    manager.down([FLAKY_CLUSTER], purge=True)
