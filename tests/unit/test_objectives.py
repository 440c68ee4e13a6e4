"""Objectives (docs/objectives.md): declared in the topology, carried in the jobs document,
judged by the running driver (/readyz, /metrics, `topo status`, the dashboard's history) and
compiled into Prometheus alerting rules by `topo export alerts`. Pure parts, checked exactly;
tests/integration/test_prometheus.py loads the rules into a real Prometheus and watches an alert
fire and resolve."""

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from ruamel.yaml import YAML

from topology.core import model_data
from topology.core.analysis import analyse
from topology.core.jobs import document, job_views, read_document
from topology.core.model import Objectives, Topology
from topology.core.objectives import Measures, Watch
from topology.core.render import alerts
from topology.ops.status import text as status_text
from topology.telemetry.collector import FiguresCollector
from topology.telemetry.figures import Figures
from topology.telemetry.health import measures, readiness
from topology.telemetry.history import History

FLOW = "east->west"
TOPOLOGY = """version: 1
name: shop
clusters:
  east: {bootstrap: "127.0.0.1:9092"}
  west: {bootstrap: "127.0.0.1:9093"}
defaults:
  objectives: {lag_seconds: 30, for_seconds: 120}
flows:
  - mirror: {from: east, to: west}
    objectives: {lag_records: 1000, heartbeat_age_seconds: 60, min_records_per_second: 50}
  - mirror: {from: west, to: east}
    objectives: {lag_seconds: null, checkpoint_age_seconds: 600}
"""


def _topology(text: str = TOPOLOGY) -> Topology:
    analysis = analyse(text, "shop.yaml")
    assert analysis.ok and analysis.topology is not None, analysis.diagnostics
    return analysis.topology


def test_objectives_merge_over_the_defaults_key_by_key_and_null_removes_one() -> None:
    topology = _topology()
    east, west = (topology.edge(n).settings.objectives for n in (FLOW, "west->east"))
    assert east.declared() == {
        "lag_seconds": 30.0,
        "lag_records": 1000.0,
        "heartbeat_age_seconds": 60.0,
        "min_records_per_second": 50.0,
    }
    assert east.for_seconds == 120
    assert west.declared() == {"checkpoint_age_seconds": 600.0}


def test_an_objective_on_what_the_flow_does_not_emit_is_t210_at_its_key() -> None:
    text = TOPOLOGY.replace(
        "    objectives: {lag_seconds: null, checkpoint_age_seconds: 600}",
        "    emit: {checkpoints: false}\n"
        "    objectives: {lag_seconds: null, checkpoint_age_seconds: 600}",
    )
    found = analyse(text, "shop.yaml").diagnostics
    assert [(d.code, d.span.line) for d in found] == [("T210", 13)]
    assert "checkpoint_age_seconds cannot be measured" in found[0].message
    bad = analyse(TOPOLOGY.replace("lag_records: 1000", "lag_records: -1"), "shop.yaml")
    assert [d.code for d in bad.diagnostics] == ["T104"]


def test_objectives_travel_in_the_jobs_document_and_a_change_is_a_job_change() -> None:
    topology = _topology()
    jobs = read_document(document(topology, 1.0).to_dict())
    assert jobs.topology().edge(FLOW).settings.objectives == topology.edge(FLOW).settings.objectives
    tighter = _topology(TOPOLOGY.replace("lag_records: 1000", "lag_records: 10"))
    assert job_views(tighter)[FLOW] != job_views(topology)[FLOW]
    assert job_views(tighter)["west->east"] == job_views(topology)["west->east"]
    # A document published before objectives existed reads as having none.
    data = model_data.to_data(topology, {"east", "west"})
    for flow in data["flows"]:
        del flow["settings"]["objectives"]
    assert model_data.from_data(data, "x").edge(FLOW).settings.objectives == Objectives()


def test_a_measure_over_its_bound_is_breached_only_after_for_seconds_on_end() -> None:
    watch = Watch(Objectives(lag_seconds=30, for_seconds=60))
    assert watch.update(1000, Measures(lag_seconds=10))[0].since is None
    first = watch.update(1010, Measures(lag_seconds=45))[0]
    assert (first.value, first.since, first.breached) == (45, 1010, False)
    assert not watch.update(1069, Measures(lag_seconds=50))[0].breached
    late = watch.update(1070, Measures(lag_seconds=50))[0]
    assert late.breached and late.since == 1010
    assert late.describe() == "lag_seconds 50s (at most 30s)"
    back = watch.update(1071, Measures(lag_seconds=29))[0]
    assert (back.since, back.breached) == (None, False)
    # Over again: the count starts again.
    assert watch.update(1080, Measures(lag_seconds=31))[0].since == 1080
    # Unknown is neither over nor within: nothing copied yet is no breach.
    unknown = watch.update(2000, Measures())[0]
    assert (unknown.value, unknown.since, unknown.breached) == (None, None, False)


def test_the_throughput_floor_holds_while_records_wait_over_a_minute() -> None:
    watch = Watch(Objectives(min_records_per_second=50, for_seconds=0))
    copied = 0
    for second in range(0, 31, 2):  # 10 records a second, records waiting
        copied += 20
        judged = watch.update(1000 + second, Measures(lag_records=500, records_copied=copied))
    assert judged[0].value == pytest.approx(10.0) and judged[0].breached
    # Caught up: nothing waits, an idle copy breaks no promise.
    judged = watch.update(1032, Measures(lag_records=0, records_copied=copied))
    assert judged[0].value is None and not judged[0].breached
    # Fast again, measured over the last minute only.
    for second in range(34, 200, 2):
        copied += 200
        judged = watch.update(1000 + second, Measures(lag_records=500, records_copied=copied))
    assert judged[0].value == pytest.approx(100.0) and not judged[0].breached
    # A new driver's counters start again: no negative rate.
    judged = watch.update(1202, Measures(lag_records=500, records_copied=5))
    assert judged[0].value is None


def _running(now: float) -> Figures:
    figures = Figures("shop", {"mode": "continuous"}, {FLOW: ("east", "west")}, now - 300)
    figures.state(FLOW, "running")
    figures.expect_heartbeats(FLOW)
    figures.heartbeats(FLOW, [0.1], int((now - 5) * 1000))
    return figures


def test_the_driver_judges_from_its_figures_and_readyz_metrics_history_say_so() -> None:
    now = 10_000.0
    figures = _running(now)
    watch = Watch(Objectives(heartbeat_age_seconds=60, lag_records=100, for_seconds=10))
    snapshot = figures.snapshot(now)
    assert measures(snapshot, snapshot.flows[FLOW]).heartbeat_age_seconds == pytest.approx(5)
    figures.objectives(FLOW, watch.update(now, measures(snapshot, snapshot.flows[FLOW])))
    assert readiness(figures.snapshot(now), 10**6)["ready"]
    # The target stops: no heartbeat arrives for 90 s.
    for later in (now + 80, now + 95):
        snapshot = figures.snapshot(later)
        figures.objectives(FLOW, watch.update(later, measures(snapshot, snapshot.flows[FLOW])))
    assert readiness(figures.snapshot(now + 95), 10**6)["unready"] == {
        FLOW: "objective breached: heartbeat_age_seconds 100s (at most 60s)"
    }
    registry = CollectorRegistry()
    registry.register(FiguresCollector(lambda: figures.snapshot(now + 95)))
    scraped = {
        (s.name, s.labels.get("objective")): s.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for s in family.samples
    }
    assert scraped[("topo_heartbeat_age_seconds", None)] == pytest.approx(100)
    assert scraped[("topo_objective", "heartbeat_age_seconds")] == 60
    assert scraped[("topo_objective_breached", "heartbeat_age_seconds")] == 1
    assert scraped[("topo_objective_breached", "lag_records")] == 0
    history = History()
    history.add(figures.snapshot(now + 95))
    sample = history.samples(now, now + 100)[1][-1]["flows"][FLOW]
    assert [(j["objective"], j["breached"]) for j in sample["objectives"]] == [
        ("lag_records", False),
        ("heartbeat_age_seconds", True),
    ]


def status_flow(**changed: Any) -> dict[str, Any]:
    """A flow of the `topo status --json` document, running and quiet but for `changed`."""
    return {
        "flow": FLOW,
        "source": "east",
        "target": "west",
        "state": "running",
        "topics": 1,
        "records": 10,
        "bytes": 100,
        "lag": 0,
        "records_per_second": 0.0,
        "bytes_per_second": 0.0,
        "latency_ms": None,
        "error": None,
        "mm2": [],
        "losses": [],
        "objectives": [],
        **changed,
    }


def shown_status(flows: list[dict[str, Any]], now: float) -> str:
    """`topo status`'s text of a running driver with these flows."""
    driver = {
        "host": "h",
        "runner": "local",
        "master": "local[*]",
        "pid": 1,
        "started_at": 0.0,
        "stale": False,
    }
    document = {"owner": "shop", "driver": driver, "running": True, "flows": flows}
    return status_text({**document, "changes": []}, now)


def test_topo_status_has_an_objectives_column_and_names_each_breach() -> None:
    flow = status_flow(
        objectives=[
            {"objective": "lag_seconds", "bound": 30, "value": 3, "since": None, "breached": False},
            {
                "objective": "heartbeat_age_seconds",
                "bound": 60,
                "value": 95.0,
                "since": 1_000.0,
                "breached": True,
            },
        ]
    )
    shown = shown_status([flow, status_flow(flow="west->east")], 2_000.0)
    header, first, second = shown.splitlines()[2:5]
    assert header.split()[-1] == "OBJECTIVES"
    assert first.split()[-2:] == ["1", "BREACHED"] and second.split()[-1] == "-"
    assert "east->west: objective breached since " in shown
    assert shown.rstrip().endswith("heartbeat_age_seconds 95s (at most 60s)")


def test_alert_rules_hold_one_rule_per_objective_and_direction_kept_to_the_owner() -> None:
    made = alerts.rule_groups(_topology())
    (group,) = made["groups"]
    rules = group["rules"]
    assert group["name"] == "topo-shop"
    assert [(r["alert"], r["labels"].get("flow"), r["labels"].get("objective")) for r in rules] == [
        ("TopoDriverAbsent", None, None),
        ("TopoFlowDown", FLOW, None),
        ("TopoObjectiveBreached", FLOW, "lag_seconds"),
        ("TopoObjectiveBreached", FLOW, "lag_records"),
        ("TopoObjectiveBreached", FLOW, "heartbeat_age_seconds"),
        ("TopoObjectiveBreached", FLOW, "min_records_per_second"),
        ("TopoFlowDown", "west->east", None),
        ("TopoObjectiveBreached", "west->east", "checkpoint_age_seconds"),
    ]
    assert {r["for"] for r in rules} == {"2m"}
    beats = rules[4]["expr"]
    assert beats == (
        'max by (flow) (topo_heartbeat_age_seconds{flow="east->west"} * on (job, instance) '
        'group_left () max by (job, instance) (topo_info{owner="shop"})) > 60'
    )
    floor = rules[5]["expr"]
    assert floor.startswith('sum by (flow) (rate(topo_records_copied_total{flow="east->west"}[1m])')
    assert "< 50 and on (flow) sum by (flow) (topo_replication_lag_records" in floor
    assert rules[7]["expr"].startswith("min by (flow) (topo_checkpoint_age_seconds")
    operator = alerts.prometheus_rule(_topology())
    assert operator["kind"] == "PrometheusRule" and operator["spec"] == made
    assert operator["metadata"]["name"] == "topo-shop"
    assert YAML(typ="safe").load(alerts.text(made)) == made
    silent = TOPOLOGY.replace("name: shop", "name: shop\nengine: {metrics: false}")
    with pytest.raises(alerts.NoMetricsError):
        alerts.rule_groups(_topology(silent))


def _topo(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "topology", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_topo_export_alerts_writes_rules_promtool_accepts_and_refuses_bad_input(
    tmp_path: Path,
) -> None:
    (tmp_path / "shop.yaml").write_text(TOPOLOGY)
    done = _topo("export", "alerts", "shop.yaml", "-o", "rules.yml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == (
        "shop.yaml: exported 8 alerting rules (5 for objectives) into rules.yml"
    )
    assert YAML(typ="safe").load((tmp_path / "rules.yml").read_text())["groups"]
    operator = _topo("export", "alerts", "shop.yaml", "--format", "operator", cwd=tmp_path)
    assert operator.stdout.startswith("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule")
    promtool = shutil.which("promtool")
    if promtool is not None:  # Debian's prometheus package has it (make test installs it)
        checked = subprocess.run(
            [promtool, "check", "rules", str(tmp_path / "rules.yml")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    wrong = _topo("export", "alerts", "shop.yaml", "--format", "grafana", cwd=tmp_path)
    assert (wrong.returncode, wrong.stderr) == (
        1,
        "error: --format 'grafana': expected rules or operator\n",
    )
    (tmp_path / "off.yaml").write_text(TOPOLOGY.replace("name: shop", "engine: {metrics: false}"))
    off = _topo("export", "alerts", "off.yaml", cwd=tmp_path)
    assert off.returncode == 1 and off.stderr.count("\n") == 1
    assert "engine.metrics is false" in off.stderr and "Traceback" not in off.stderr
    (tmp_path / "bad.yaml").write_text(TOPOLOGY.replace("lag_records: 1000", "lag_records: x"))
    bad = _topo("export", "alerts", "bad.yaml", "-o", "never.yml", cwd=tmp_path)
    assert bad.returncode == 1 and "nothing exported" in bad.stderr
    assert not (tmp_path / "never.yml").exists()
