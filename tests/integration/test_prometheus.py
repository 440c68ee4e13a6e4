"""The metrics in a real Prometheus: it scrapes a running driver on lab clusters, every query of
the Grafana dashboard (dashboards/grafana-topo.json) is valid PromQL that Prometheus answers,
and `topo dashboard --prometheus` builds its history from Prometheus' range queries.

`make test` installs Debian's `prometheus` package where apt-get may run (as root, as in CI);
elsewhere `make prometheus` builds one from its Go module. The test runs when a `prometheus` is
found (TOPO_PROMETHEUS, the PATH, or where `go install` puts it) and is skipped otherwise."""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SOURCE_CLUSTER
from tests.integration.test_metrics import _get, _until
from tests.integration.test_replication import contents, expected, varied, wait_for
from tests.integration.test_service import Machine, _status, runs  # noqa: F401 (a fixture)
from tests.unit.test_grafana_dashboard import load, queries
from topology.kafka import records

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
TARGET = "itest-region-d"  # a lab cluster of its own: the test stops it
BEAT_BOUND = 20  # seconds: heartbeats are read back every 5 s


def _prometheus_binary() -> str | None:
    named = os.environ.get("TOPO_PROMETHEUS")
    if named:
        return named
    gopath = Path(os.environ.get("GOPATH") or Path.home() / "go")
    built = gopath / "bin" / "prometheus"
    return shutil.which("prometheus") or (str(built) if built.exists() else None)


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[Path, list["subprocess.Popen[bytes]"]]]:
    binary = _prometheus_binary()
    if binary is None:
        pytest.skip("no prometheus binary: `make prometheus` builds one")
    started: list[subprocess.Popen[bytes]] = []
    yield Path(binary), started
    for process in started:
        if process.stdout is not None:
            process.stdout.close()
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _query(base: str, promql: str) -> dict:  # type: ignore[type-arg]
    code, body = _get(f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}")
    answer = json.loads(body)
    assert code == 200 and answer["status"] == "success", (promql, body)
    return answer["data"]  # type: ignore[no-any-return]


def test_prometheus_scrapes_the_driver_answers_every_grafana_query_and_fires_the_alerts(
    tmp_path: Path,
    lab: dict[str, dict[str, str]],
    more_clusters: dict[str, dict[str, str]],
    runs: list["subprocess.Popen[bytes]"],  # noqa: F811 (the fixture imported above)
    prometheus: tuple[Path, list["subprocess.Popen[bytes]"]],
) -> None:
    """Also: the rules of `topo export alerts` pass `promtool check rules`, and their heartbeat
    objective fires while the target cluster is stopped and resolves once it is back, as the
    driver's /readyz says the same."""
    from topology.lab import manager

    binary, started = prometheus
    src, dst = lab[SOURCE_CLUSTER], more_clusters[TARGET]
    prefix = f"px{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}-orders"
    records.create_topic(src, topic, 2)
    written = varied(topic, 10, 2)
    records.produce(src, written)
    file = tmp_path / f"{prefix}.yaml"
    file.write_text(
        "version: 1\nengine: {runner: external, state_cluster: src, metrics: {port: 0}}\n"
        "clusters:\n"
        f'  src: {{bootstrap: "{src["bootstrap.servers"]}"}}\n'
        f'  dst: {{bootstrap: "{dst["bootstrap.servers"]}"}}\n'
        "defaults:\n  replication_factor: 1\n"
        f'  topics: {{include: ["{prefix}-.*"]}}\n'
        "flows:\n  - mirror: {from: src, to: dst}\n"
        f"    objectives: {{heartbeat_age_seconds: {BEAT_BOUND}, lag_seconds: 3600, "
        "for_seconds: 5}\n"
    )
    machine = Machine(tmp_path / "machine-a")  # the `runs` fixture stops its driver
    applied = machine.topo("apply", str(file), "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    runs.append(
        subprocess.Popen(
            [sys.executable, "-m", "topology", "run", str(file)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=machine.env,
            start_new_session=True,
        )
    )
    copied = wait_for(dst, f"src.{topic}", len(written))
    assert contents(copied) == expected(records.read_topic(src, topic), "src")
    url = _until(
        "metrics_url", lambda: (_status(machine, file).get("driver") or {}).get("metrics_url")
    )

    # A real Prometheus scrapes the driver every second.
    port = _free_port()
    target = url.removeprefix("http://")
    config = tmp_path / "prometheus.yml"
    rules = tmp_path / "rules.yml"
    exported = machine.topo("export", "alerts", str(file), "-o", str(rules))
    assert exported.returncode == 0, exported.stderr
    promtool = Path(binary).with_name("promtool")
    checked = subprocess.run(
        [str(promtool), "check", "rules", str(rules)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0 and "SUCCESS: 4 rules found" in checked.stdout, checked
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: ['{rules}']\n"
        f"scrape_configs:\n  - job_name: topo\n    static_configs: [{{targets: ['{target}']}}]\n"
    )
    with (tmp_path / "prometheus.log").open("wb") as log:
        started.append(
            subprocess.Popen(
                [
                    str(binary),
                    f"--config.file={config}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                ],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        )
    base = f"http://127.0.0.1:{port}"
    _until("Prometheus ready", lambda: _ready(base), 60)
    flow = 'flow="src->dst"'
    copied_query = f'topo_records_copied_total{{{flow}, topic="{topic}"}}'

    def scraped() -> bool:
        result = _query(base, copied_query)["result"]
        return bool(result) and float(result[0]["value"][1]) == len(written)

    _until("Prometheus has the copy's counter", scraped, 60)
    counted = time.monotonic()
    # Prometheus loaded topo's rules; none fires once the copy keeps up.
    _until("ready", lambda: _readyz(url) == "", 60)
    _until("no alert firing", lambda: _alerts(base, "firing") == [], 60)

    # The target stops: no heartbeat reaches it, the objective breaks, the alert fires, and
    # the driver's /readyz names the objective.
    manager.down([TARGET])
    try:
        beat = ("TopoObjectiveBreached", "src->dst", "heartbeat_age_seconds")
        _until("the heartbeat alert fires", lambda: beat in _alerts(base, "firing"), 120)
        _until(
            "/readyz names the breached objective",
            lambda: "objective breached: heartbeat_age_seconds" in _readyz(url),
            60,
        )
    finally:
        manager.up([manager.UpRequest(TARGET)])
    _until("the heartbeat alert resolves", lambda: beat not in _alerts(base, "firing"), 180)
    _until("ready again", lambda: _readyz(url) == "", 120)

    # Past the rate() window of the dashboards' queries, so that rates have two points.
    time.sleep(max(0.0, 70 - (time.monotonic() - counted)))

    # Every Grafana query is valid PromQL over what the driver exports; the charts of a
    # copying flow have data.
    answered = {}
    for where, expr in queries(load()):
        if where.startswith("$"):
            continue  # a variable's label_values(), Grafana's own function
        promql = expr.replace("$owner", prefix).replace("$flow", ".*").replace("$__range", "5m")
        answered[where] = _query(base, promql)["result"]
    for panel in ("Records copied", "Lag (records)", "Flows up", "Heartbeat age [A]"):
        found = [result for where, result in answered.items() if where.startswith(panel)]
        assert found and found[0], (panel, answered.keys())
    # The heartbeat objective's bound is drawn, and judged kept.
    assert [float(r["value"][1]) for r in answered["Heartbeat age [B]"]] == [BEAT_BOUND]
    kept = {r["metric"]["objective"]: r["value"][1] for r in answered["Objectives breached [A]"]}
    assert kept == {"heartbeat_age_seconds": "0", "lag_seconds": "0"}

    # `topo dashboard --prometheus` builds its history from Prometheus' range queries.
    dashboard = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "topology",
            "dashboard",
            str(file),
            "--port",
            "0",
            "--prometheus",
            base,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=machine.env,
        text=True,
    )
    started.append(dashboard)  # type: ignore[arg-type]
    assert dashboard.stdout is not None
    line = dashboard.stdout.readline()
    assert "Dashboard of" in line, line
    page = line.rsplit(" ", 1)[-1].strip()
    code, body = _get(f"{page}api/history?seconds=300")
    history = json.loads(body)
    assert code == 200, body
    assert history["origin"] == "prometheus" and history["owner"] == prefix
    assert [entry["flow"] for entry in history["graph"]] == ["src->dst"]
    newest = history["samples"][-1]
    assert newest["topics"]["src->dst"][topic]["records"] == len(written)
    assert newest["flows"]["src->dst"]["records"] >= len(written)

    # Stopped and awaited here: a Popen collected while its process runs is a ResourceWarning.
    stopped = machine.topo("stop", str(file))
    assert stopped.returncode == 0, stopped.stderr
    assert runs[0].wait(90) == 0


def _alerts(base: str, state: str) -> list[tuple[str, str | None, str | None]]:
    """The alerts Prometheus has in `state` (pending, firing): name, flow, objective."""
    _code, body = _get(f"{base}/api/v1/alerts")
    found = json.loads(body)["data"]["alerts"]
    return sorted(
        (a["labels"]["alertname"], a["labels"].get("flow"), a["labels"].get("objective"))
        for a in found
        if a["state"] == state
    )


def _readyz(url: str) -> str:
    """What /readyz says is unready ("" when ready)."""
    try:
        code, body = _get(f"{url}/readyz")
    except OSError:
        return "unanswered"
    return "" if code == 200 else body


def _ready(base: str) -> bool:
    try:
        return _get(f"{base}/-/ready")[0] == 200
    except OSError:
        return False
