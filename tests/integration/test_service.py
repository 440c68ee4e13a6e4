"""Replication as a service: `topo run` supervising the driver on the jobs `topo apply`
published, status and stop from another machine (another state folder), one writer per
topology, and the sources followed while running. Real lab clusters, real Spark."""

import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka.admin import AdminClient

# confluent_kafka.admin re-exports these without declaring it: imported from where they are defined.
from confluent_kafka.admin._config import AlterConfigOpType, ConfigEntry, ConfigResource

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import RECENT_MS, run_topo
from tests.integration.test_replication import contents, expected, varied, wait_for
from topology.kafka import records
from topology.kafka.records import Record

if TYPE_CHECKING:
    from tests.spark_cluster import StandaloneSpark

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


class Machine:
    """topo as run on one machine: its own state folder, nothing shared but the clusters."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, "TOPO_STATE_DIR": str(folder)}
        self.folder = folder

    def topo(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_topo(*args, env=self.env)

    def start_run(self, file: Path, log: Path) -> "subprocess.Popen[bytes]":
        """`topo run FILE` in the foreground of its own session, its output in `log`."""
        with log.open("wb") as out:
            return subprocess.Popen(
                [sys.executable, "-m", "topology", "run", str(file)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )


def _mirror(
    folder: Path, prefix: str, src: dict[str, str], dst: dict[str, str], engine: str
) -> Path:
    """A topology mirroring the `prefix` topics from src to dst, with this engine section."""
    file = folder / f"{prefix}.yaml"
    file.write_text(
        f"version: 1\n{engine}clusters:\n"
        f'  src: {{bootstrap: "{src["bootstrap.servers"]}"}}\n'
        f'  dst: {{bootstrap: "{dst["bootstrap.servers"]}"}}\n'
        "defaults:\n  replication_factor: 1\n"
        f'  topics: {{include: ["{prefix}-.*"]}}\n'
        "flows:\n  - mirror: {from: src, to: dst}\n"
    )
    return file


def _wait_for_all(config: dict[str, str], topic: str, source: list[Record]) -> None:
    """Until every source record is on the target (a count would be met early by the
    duplicates an at-least-once takeover may write)."""
    wanted, deadline = set(expected(source, "src")), time.monotonic() + 180
    missing = wanted
    while time.monotonic() < deadline:
        missing = wanted - set(contents(records.read_topic(config, topic)))
        if not missing:
            return
        time.sleep(1)
    first = sorted(missing)[:5]
    raise AssertionError(f"{len(missing)} of {len(wanted)} records not on {topic}: {first}")


def _wait_for_line(log: Path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    raise AssertionError(f"{text!r} not in {log} after {timeout}s:\n{log.read_text()[-3000:]}")


def _topic_config(config: dict[str, str], topic: str, name: str) -> str | None:
    # {**config}: a dict[str, str | int | float | bool], as AdminClient asks (dict is invariant)
    admin = AdminClient({**config})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    described = admin.describe_configs([resource])[resource].result(30)
    entry = described.get(name)
    return None if entry is None else entry.value


def _set_topic_config(config: dict[str, str], topic: str, name: str, value: str) -> None:
    admin = AdminClient({**config})
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[entry])
    admin.incremental_alter_configs([resource])[resource].result(30)


def _status(machine: Machine, file: Path) -> dict[str, Any]:
    import json

    done = machine.topo("status", str(file), "--json")
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[list["subprocess.Popen[bytes]"]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:  # a failed test leaves nothing running
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait(30)
    for folder in tmp_path.glob("machine-*"):
        from tests.conftest import _stop_replication

        _stop_replication(folder)


def test_a_supervised_run_is_watched_followed_fenced_and_stopped_from_anywhere(
    tmp_path: Path, lab: dict[str, dict[str, str]], runs: list["subprocess.Popen[bytes]"]
) -> None:
    src, dst = lab[SOURCE_CLUSTER], lab[TARGET_CLUSTER]
    prefix = f"sv{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}-orders"
    records.create_topic(src, topic, 2)
    records.produce(src, varied(topic, 12, 2))
    # Stated, the config look backs off to a minute at most (at topo's defaults: 600 s, as MM2's).
    engine = "engine: {runner: external, intervals: {sync.topic.configs.interval.seconds: 10}}\n"
    file = _mirror(tmp_path, prefix, src, dst, engine)
    operator, first, second = (Machine(tmp_path / f"machine-{n}") for n in ("op", "a", "b"))

    # Apply publishes the jobs and runs nothing itself (runner external).
    applied = operator.topo("apply", str(file), "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    assert "published 1 job(s) to topo-runs.internal on dst" in applied.stderr
    assert "the `topo run` you supervise picks them up" in applied.stderr

    # The supervised `topo run` on machine a picks them up and copies, record by record.
    log_a = tmp_path / "run-a.log"
    runs.append(first.start_run(file, log_a))
    _wait_for_line(log_a, "starting the driver (generation")
    copied = wait_for(dst, f"src.{topic}", 12)
    assert contents(copied) == expected(records.read_topic(src, topic), "src")

    # Status from another machine: read from topo-runs.internal, not from a local file.
    deadline = time.monotonic() + 60
    status = _status(operator, file)
    while (not status["running"] or status["flows"][0]["records"] < 12) and (
        time.monotonic() < deadline
    ):
        time.sleep(1)
        status = _status(operator, file)
    assert status["running"] is True
    assert status["driver"]["state"] == "running" and not status["driver"]["stale"]
    assert status["flows"][0]["state"] == "running" and status["flows"][0]["records"] >= 12
    assert not (operator.folder / prefix).exists()  # nothing of it on the operator's machine

    # A second `topo run` for the same topology waits: one driver writes.
    log_b = tmp_path / "run-b.log"
    runs.append(second.start_run(file, log_b))
    _wait_for_line(log_b, "holds this topology's lease")
    more = [Record(topic, i % 2, f"more-{i}".encode(), b"v", (), RECENT_MS + i) for i in range(20)]
    records.produce(src, more)
    everything = records.read_topic(src, topic)
    wait_for(dst, f"src.{topic}", len(everything))
    time.sleep(3)  # a second writer's duplicates would have arrived by now
    assert contents(records.read_topic(dst, f"src.{topic}")) == expected(everything, "src")
    assert "starting the driver" not in log_b.read_text()

    # A source config change reaches the copy within seconds, recorded as the driver's change.
    _set_topic_config(src, topic, "retention.ms", "86400001")
    deadline = time.monotonic() + 120  # a quiet look waits a minute at most, as stated
    while _topic_config(dst, f"src.{topic}", "retention.ms") != "86400001":
        assert time.monotonic() < deadline, "the config change was not followed in 120 s"
        time.sleep(1)
    deadline = time.monotonic() + 30
    changes: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not changes:
        changes = [
            c
            for c in _status(operator, file)["changes"]
            if c["name"] == f"src.{topic}" and c["resource"] == "topic_config"
        ]
        time.sleep(1)
    assert changes and changes[-1]["outcome"] == "done" and changes[-1]["cluster"] == "dst"
    assert "retention.ms" in changes[-1]["what"] and "86400001" in changes[-1]["what"]
    assert "retention.ms" in operator.topo("status", str(file)).stdout

    # Machine a is lost (kill -9 of its `topo run` and its driver): b's `topo run` takes the
    # lease once a's has expired, and copies what was written meanwhile; nothing is lost.
    _lose_machine(first.folder / prefix / "driver.json", runs[0])
    late = [Record(topic, i % 2, f"late-{i}".encode(), b"v", (), RECENT_MS + i) for i in range(10)]
    records.produce(src, late)
    _wait_for_line(log_b, "starting the driver (generation", timeout=120)
    everything = records.read_topic(src, topic)
    _wait_for_all(dst, f"src.{topic}", everything)  # at-least-once: every record, maybe twice
    assert _status(operator, file)["running"] is True  # b's driver holds the lease now

    # Stop from the operator's machine: b's supervisor ends cleanly, the lease is released.
    stopped = operator.topo("stop", str(file))
    assert stopped.returncode == 0, stopped.stderr
    assert "Stopped the replication" in stopped.stdout
    assert runs[1].wait(90) == 0
    assert "stop requested" in log_b.read_text()
    assert _status(operator, file)["running"] is False


def _lose_machine(driver_file: Path, supervisor: "subprocess.Popen[bytes]") -> None:
    """kill -9 of a machine's `topo run` and of the driver it runs."""
    import json

    recorded = json.loads(driver_file.read_text())
    os.killpg(supervisor.pid, 9)
    supervisor.wait(30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(recorded["submit_pid"], 9)


def test_copy_slots_spread_over_two_workers_take_new_topics_and_survive_a_lost_worker(
    tmp_path: Path,
    lab: dict[str, dict[str, str]],
    spark_cluster: "StandaloneSpark",
    runs: list["subprocess.Popen[bytes]"],
) -> None:
    """A flow of 12 partitions as 4 copy slots on a standalone cluster of two workers: the slots
    run on both, a new topic joins them without a restart, and when one worker is lost its
    slots run again on the other. Exactly-once: every record once, read_committed."""
    from tests import spark_cluster as standalone

    src, dst = lab[SOURCE_CLUSTER], lab[TARGET_CLUSTER]
    prefix = f"sw{uuid.uuid4().hex[:8]}"
    topic, later = f"{prefix}-payments", f"{prefix}-later"
    records.create_topic(src, topic, 12)
    records.produce(src, varied(topic, 24, 12))
    engine = (
        f"engine:\n  runner: spark\n  master: {spark_cluster.master_url}\n"
        "  spark_conf: {spark.executor.memory: 512m, spark.executor.cores: 2,"
        " spark.cores.max: 4}\n"
    )
    file = _mirror(tmp_path, prefix, src, dst, engine)
    file.write_text(
        file.read_text().replace(
            "  - mirror: {from: src, to: dst}\n",
            "  - mirror: {from: src, to: dst}\n    tasks: 4\n    delivery: exactly-once\n",
        )
    )
    here, elsewhere = Machine(tmp_path / "machine-here"), Machine(tmp_path / "machine-else")

    # The local machine runs `topo run` in the background; the slots run on the cluster.
    applied = here.topo("apply", str(file), "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    assert "4 copy slots" in applied.stdout
    assert "starting the replication supervisor" in applied.stderr
    copied = wait_for(dst, f"src.{topic}", 24)
    assert contents(copied) == expected(records.read_topic(src, topic), "src")
    active = [app["name"] for app in spark_cluster.status().get("activeapps", [])]
    assert f"topo-{prefix}" in active

    def slot_lines() -> dict[str, list[str]]:
        """Per worker, the slots its executors ran: `topo: src->dst: copy slot 2 runs on ...`."""
        return {
            worker: [line for line in text.splitlines() if ": copy slot " in line]
            for worker, text in spark_cluster.executor_logs(f"topo-{prefix}").items()
        }

    def slots(lines: list[str]) -> set[str]:
        return {line.split(": copy slot ")[1].split()[0] for line in lines}

    # Each worker's executor runs slots of the flow (2 cores each: 2 slots each).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(len(v) == 2 for v in slot_lines().values()):
        time.sleep(1)
    started = slot_lines()
    assert sorted(started) == ["worker", "worker-2"], started
    assert all(len(lines) == 2 for lines in started.values()), started

    # A topic made on the source joins the running slots: none restarts.
    records.create_topic(src, later, 2)
    records.produce(src, varied(later, 6, 2))
    assert contents(wait_for(dst, f"src.{later}", 6)) == expected(
        records.read_topic(src, later), "src"
    )
    assert slot_lines() == started  # no slot launched again
    assert _status(here, file)["flows"][0]["restarts"] == 0

    # One worker (and its executor) is lost mid-stream: its slots run again on the other
    # worker, alone; nothing is lost or copied twice.
    stream = [Record(topic, i % 12, f"s-{i}".encode(), b"v", (), RECENT_MS + i) for i in range(60)]
    records.produce(src, stream[:30])
    standalone.kill_worker(spark_cluster)
    records.produce(src, stream[30:])
    everything = records.read_topic(src, topic)
    _wait_for_all(dst, f"src.{topic}", everything)
    assert contents(records.read_topic(dst, f"src.{topic}")) == expected(everything, "src")
    # (kill_worker kills the worker started last)
    again = [line for line in slot_lines()["worker"] if "(attempt 0)" not in line]
    assert slots(again) == slots(started["worker-2"]), slot_lines()
    assert _status(here, file)["flows"][0]["restarts"] == 0  # the flow went on

    # Stopped from another machine's state folder.
    stopped = elsewhere.topo("stop", str(file))
    assert stopped.returncode == 0, stopped.stderr
    assert "Stopped the replication" in stopped.stdout
    assert _status(elsewhere, file)["running"] is False


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_the_jobs_document_is_the_contract_a_comment_changes_nothing_an_engine_edit_restarts(
    tmp_path: Path, lab: dict[str, dict[str, str]], runs: list["subprocess.Popen[bytes]"]
) -> None:
    """The driver runs the published jobs document and never reads the topology file: a
    comment added after apply does not stop a driver restarted after kill -9; an `engine:`
    edit is a plan change that restarts it with the new setting; `topo status` straight after
    `topo apply` shows the flows running."""
    import json

    src, dst = lab[SOURCE_CLUSTER], lab[TARGET_CLUSTER]
    prefix = f"jd{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}-orders"
    records.create_topic(src, topic, 2)
    records.produce(src, varied(topic, 10, 2))
    first_port = _free_port()
    engine = f"engine: {{metrics: {{port: {first_port}}}}}\n"
    file = _mirror(tmp_path, prefix, src, dst, engine)
    here = Machine(tmp_path / "machine-here")

    applied = here.topo("apply", str(file), "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    assert "the driver reports its flows running" in applied.stderr
    status = _status(here, file)  # straight after apply, no wait: it agrees
    assert status["running"] is True and status["flows"][0]["state"] == "running", status
    assert status["driver"]["metrics_url"].endswith(f":{first_port}")
    wait_for(dst, f"src.{topic}", 10)

    # A comment and a blank line: no change to plan, nothing republished.
    file.write_text("# reviewed in PR 7: replicate the orders\n\n" + file.read_text())
    again = here.topo("apply", str(file), "--auto-approve")
    assert again.returncode == 0, again.stderr
    assert "No changes" in again.stdout and "published" not in again.stderr

    # kill -9 of the driver: its supervisor restarts it on the published jobs, which it runs
    # whatever the file now says; records written meanwhile are copied, record by record.
    recorded = json.loads((here.folder / prefix / "driver.json").read_text())
    os.killpg(recorded["submit_pid"], 9)
    late = [Record(topic, i % 2, f"late-{i}".encode(), b"v", (), RECENT_MS + i) for i in range(8)]
    records.produce(src, late)
    _wait_for_all(dst, f"src.{topic}", records.read_topic(src, topic))
    log = (here.folder / prefix / "driver.log").read_text()
    assert "changed since it was applied" not in log
    assert log.count("starting the driver (generation") >= 2  # restarted, not re-applied

    # An engine edit is a restart of the replication job, with the engine's before and after.
    second_port = _free_port()
    file.write_text(file.read_text().replace(f"port: {first_port}", f"port: {second_port}"))
    planned = here.topo("plan", str(file))
    assert planned.returncode == 0, planned.stderr
    assert "~ replication job src->dst" in planned.stdout, _status(here, file)
    assert f"engine.metrics.port: {first_port} → {second_port}" in planned.stdout
    moved = here.topo("apply", str(file), "--auto-approve")
    assert moved.returncode == 0, moved.stderr
    assert "restarts its driver on them" in moved.stderr
    status = _status(here, file)
    assert status["running"] is True and status["flows"][0]["state"] == "running", status
    assert status["driver"]["metrics_url"].endswith(f":{second_port}")

    stopped = here.topo("stop", str(file))
    assert stopped.returncode == 0, stopped.stderr
