"""Watching replication: the driver's /metrics, /healthz, /readyz and /history, `topo status`
from another machine finding them, `topo dashboard` in a real headless Chromium, and
`topo run --log-format json`. Real lab clusters, real Spark."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import SOURCE_CLUSTER
from tests.integration.test_replication import contents, expected, varied, wait_for
from tests.integration.test_service import Machine, _status, runs  # noqa: F401 (a fixture)
from topology.kafka import records
from topology.kafka.records import Record

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
TARGET = "itest-region-d"  # one of more_clusters: this test stops and restarts it
SCREENSHOTS = "TOPO_DASHBOARD_SCREENSHOTS"  # a folder: the dashboard test saves its pictures


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as problem:
        with problem:  # closed here: an unclosed answer is a ResourceWarning, an error in tests
            return problem.code, problem.read().decode()


def _samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape: (name, sorted labels) -> value."""
    _code, text = _get(f"{url}/metrics")
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def _value(samples: dict[Any, float], name: str, **labels: str) -> float | None:
    for (found, labelled), value in samples.items():
        if found == name and labels.items() <= dict(labelled).items():
            return value
    return None


def _until(what: str, check: Any, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(1)
    raise AssertionError(f"{what}: not within {timeout:.0f}s")


def _chromium() -> str:
    """The system's Chromium: found, else installed from Debian's packages (as root)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
            subprocess.run(
                command,
                check=False,
                timeout=1200,
                env=environment,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        found = shutil.which("chromium")
        if found:
            return found
    pytest.fail("Chromium is needed for the dashboard test: apt-get install chromium")


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[list["subprocess.Popen[str]"]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        process.terminate()
        process.wait(30)
        if process.stdout is not None:
            process.stdout.close()


def test_metrics_readiness_history_dashboard_and_json_logs(
    tmp_path: Path,
    lab: dict[str, dict[str, str]],
    more_clusters: dict[str, dict[str, str]],
    runs: list["subprocess.Popen[bytes]"],  # noqa: F811 (the fixture imported above)
    dashboard: list["subprocess.Popen[str]"],
) -> None:
    from topology.lab import manager

    src, dst = lab[SOURCE_CLUSTER], more_clusters[TARGET]
    prefix = f"mx{uuid.uuid4().hex[:8]}"
    first, later = f"{prefix}-orders", f"{prefix}-later"
    records.create_topic(src, first, 2)
    written = varied(first, 12, 2)
    records.produce(src, written)
    file = tmp_path / f"{prefix}.yaml"
    file.write_text(
        "version: 1\nengine: {runner: external, state_cluster: src, metrics: {port: 0}}\n"
        "clusters:\n"
        f'  src: {{bootstrap: "{src["bootstrap.servers"]}"}}\n'
        f'  far: {{bootstrap: "{dst["bootstrap.servers"]}"}}\n'
        "defaults:\n  replication_factor: 1\n"
        f'  topics: {{include: ["{prefix}-.*"]}}\n'
        "flows:\n  - mirror: {from: src, to: far}\n"
        # A bound no record of the session can pass (their timestamps start an hour before the
        # session did, and a record waiting a moment is as old as the newest copy): the
        # dashboard's table says ok.
        "    objectives: {lag_seconds: 86400}\n"
    )
    operator, runner = Machine(tmp_path / "machine-op"), Machine(tmp_path / "machine-a")
    applied = operator.topo("apply", str(file), "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    out, err = tmp_path / "run.out", tmp_path / "run.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        runs.append(
            subprocess.Popen(
                [sys.executable, "-m", "topology", "run", str(file), "--log-format", "json"],
                stdout=stdout,
                stderr=stderr,
                env=runner.env,
                start_new_session=True,
            )
        )
    copied = wait_for(dst, f"src.{first}", len(written))
    assert contents(copied) == expected(records.read_topic(src, first), "src")

    # `topo status` on another machine finds the driver's endpoint in the published status.
    # (the copy can be done before the driver first publishes its status: wait for that too)
    url = _until(
        "metrics_url", lambda: (_status(operator, file).get("driver") or {}).get("metrics_url")
    )
    assert url.startswith("http://127.0.0.1:")
    assert f"Metrics: {url}/metrics" in operator.topo("status", str(file)).stdout

    # The counters match what was copied exactly, lag goes to 0, latencies have samples.
    flow = {"flow": "src->far", "source": "src", "target": "far"}
    size = sum(len(r.key or b"") + len(r.value or b"") for r in written)

    def settled() -> dict[Any, float] | None:
        now = _samples(url)
        done = _value(now, "topo_records_copied_total", topic=first, **flow) == len(written)
        lag = _value(now, "topo_replication_lag_records", topic=first, **flow)
        beats = _value(now, "topo_heartbeat_latency_seconds_count", **flow) or 0
        return now if done and lag == 0 and beats > 0 else None

    scraped = _until("the counters of the first copy", settled)
    assert _value(scraped, "topo_bytes_copied_total", topic=first, **flow) == size
    assert _value(scraped, "topo_replication_lag_seconds", topic=first, **flow) == 0
    assert (_value(scraped, "topo_replication_latency_seconds_count", **flow) or 0) >= len(written)
    latency = _value(scraped, "topo_topic_replication_latency_seconds_count", topic=first, **flow)
    assert latency == len(written)
    assert _value(scraped, "topo_flow_up", **flow) == 1
    assert _value(scraped, "topo_flow_state", state="running", **flow) == 1
    assert (_value(scraped, "topo_topics_synced", **flow) or 0) >= 1
    assert (_value(scraped, "topo_partitions_followed", **flow) or 0) >= 2
    assert _value(scraped, "topo_info", owner=prefix) == 1
    assert _get(f"{url}/healthz") == (200, "ok\n")
    _until("ready", lambda: _get(f"{url}/readyz")[0] == 200)

    # A topic created on the source is discovered: it appears as a label, counted exactly.
    records.create_topic(src, later, 1)
    more = [Record(later, 0, f"k{i}".encode(), b"vv", (), None) for i in range(5)]
    records.produce(src, more)
    wait_for(dst, f"src.{later}", len(more))
    _until(
        "the discovered topic's counter",
        lambda: (
            _value(_samples(url), "topo_records_copied_total", topic=later, **flow) == len(more)
        ),
    )
    scraped = _samples(url)
    assert (_value(scraped, "topo_topics_discovered_total", **flow) or 0) >= 1
    # it joined the running copy loop: nothing restarted for it
    assert (_value(scraped, "topo_restarts_total", reason="topics", **flow) or 0) == 0

    # /readyz turns unready while the target cluster is down, and ready once it is back. The
    # records written meanwhile wait: the lag counts them exactly (asked of the source, as a
    # hung batch reports nothing), and goes back to 0 once they are copied.
    manager.down([TARGET])
    waiting = varied(first, 7, 2, tag="w")
    try:  # kept short: past the sink's 120 s delivery timeout, a batch fails and is replayed
        records.produce(src, waiting)
        _until(
            "the waiting records as lag",
            lambda: _value(_samples(url), "topo_replication_lag_records", topic=first, **flow) == 7,
        )
        # `topo status`, from the other machine, says so too (with the heartbeats waiting).
        _until("the status's lag", lambda: (_status(operator, file)["flows"][0]["lag"] or 0) >= 7)
        code, body = _until("unready", lambda: (r := _get(f"{url}/readyz"))[0] == 503 and r, 90)
        assert "src->far" in json.loads(body)["unready"]
    finally:
        manager.up([manager.UpRequest(TARGET)])
    _until("ready again", lambda: _get(f"{url}/readyz")[0] == 200, 180)
    copied = wait_for(dst, f"src.{first}", len(written) + len(waiting))
    assert contents(copied) == expected(records.read_topic(src, first), "src")

    def caught_up() -> bool:
        now = _samples(url)
        lag = _value(now, "topo_replication_lag_records", topic=first, **flow)
        done = _value(now, "topo_records_copied_total", topic=first, **flow)
        return lag == 0 and done == len(written) + len(waiting)

    _until("the lag back to 0", caught_up)

    # The bounded history the dashboard charts.
    code, body = _get(f"{url}/history?seconds=900")
    history = json.loads(body)
    assert code == 200 and history["owner"] == prefix and history["origin"] == "driver"
    assert history["graph"] == [{**flow, "state": "running"}]
    assert history["samples"] and history["samples"][-1]["flows"]["src->far"]["records"] >= 17

    # The dashboard, from the operator's machine, in a real headless Chromium.
    _check_dashboard(operator, file, dashboard, src, later)

    # Stopped from the operator's machine; every line `topo run` printed is one JSON object.
    stopped = operator.topo("stop", str(file))
    assert stopped.returncode == 0, stopped.stderr
    assert runs[0].wait(90) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines and all(set(e) == {"time", "level", "flow", "event", "message"} for e in lines)
    assert any(e["event"] == "supervisor" for e in lines)
    assert any(e["event"] == "topics.discovered" and e["flow"] == "src->far" for e in lines)
    assert any(e["event"] == "metrics" or "metrics:" in e["message"] for e in lines)
    assert "topo:" not in out.read_text()


def _check_dashboard(
    operator: Machine,
    file: Path,
    started: list["subprocess.Popen[str]"],
    src: dict[str, str],
    topic: str,
) -> None:
    from playwright.sync_api import ConsoleMessage, sync_playwright

    chromium = _chromium()
    process = subprocess.Popen(
        [sys.executable, "-m", "topology", "dashboard", str(file), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=operator.env,
        text=True,
    )
    started.append(process)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "Dashboard of" in line, line
    page_url = line.rsplit(" ", 1)[-1].strip()
    stop = threading.Event()

    def produce() -> None:  # records flowing while the page is watched
        index = 0
        while not stop.is_set():
            records.produce(src, [Record(topic, 0, f"live{index}".encode(), b"x", (), None)])
            index += 1
            stop.wait(0.5)

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    problems: list[str] = []

    def console_error(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(message.text)

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.on("console", console_error)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(page_url)
            page.wait_for_selector('body[data-ready="1"]', timeout=60_000)
            row = page.locator('table#flows tr[data-flow="src->far"]')
            assert row.count() == 1
            # Non-zero throughput: the flow's rate, once the history has two samples with
            # records copied between them.
            deadline = time.monotonic() + 60
            rate = 0.0
            while time.monotonic() < deadline and rate <= 0:
                text = row.locator("td.rate").inner_text().replace(",", "").strip()
                rate = float(text) if text.replace(".", "", 1).isdigit() else 0.0
                if rate <= 0:
                    page.wait_for_timeout(2000)
            assert rate > 0, "the dashboard shows no throughput"
            # The flow's objectives, as the driver judged them (docs/objectives.md).
            assert row.locator("td.objectives").inner_text().strip() == "ok"
            assert page.locator("#stale").is_hidden()
            folder = os.environ.get(SCREENSHOTS)
            if folder:
                page.screenshot(path=str(Path(folder) / "dashboard.png"), full_page=True)
            browser.close()
    finally:
        stop.set()
        producer.join(10)
    assert not problems, problems
