import json
import os
import signal
import socket
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import RECENT_MS, run_topo
from topology.core.errors import KafkaUnavailableError, LabError
from topology.kafka import records
from topology.kafka.records import Record
from topology.lab import manager, process, state

pytestmark = pytest.mark.kafka
ROOT = Path(__file__).resolve().parents[2]


def sample(topic: str, count: int, partitions: int) -> list[Record]:
    return [
        Record(
            topic=topic,
            partition=i % partitions,
            key=None if i == 3 else f"k{i}".encode(),
            value=None if i == 4 else f"v{i}".encode(),
            headers=(("h", f"{i}".encode()), ("h", None)),
            timestamp_ms=RECENT_MS + i,
        )
        for i in range(count)
    ]


def test_a_lab_cluster_round_trips_records(source: dict[str, str], topic_name: str) -> None:
    written = sample(topic_name, 10, partitions=2)
    records.create_topic(source, topic_name, 2)
    records.produce(source, written)
    read = records.read_topic(source, topic_name)
    assert [r.content() for r in read] == sorted((w.content() for w in written), key=lambda c: c[0])
    assert [r.offset for r in read if r.partition == 0] == list(range(5))


def test_two_lab_clusters_are_independent(
    source: dict[str, str], target: dict[str, str], topic_name: str
) -> None:
    assert source["bootstrap.servers"] != target["bootstrap.servers"]
    records.create_topic(source, topic_name, 1)
    records.produce(source, sample(topic_name, 3, partitions=1))
    with pytest.raises(KafkaUnavailableError, match="cannot read topic"):
        records.read_topic(target, topic_name)
    records.create_topic(target, topic_name, 1)
    records.produce(target, sample(topic_name, 1, partitions=1))
    assert len(records.read_topic(source, topic_name)) == 3
    assert len(records.read_topic(target, topic_name)) == 1


def test_up_is_idempotent_and_prints_name_and_bootstrap(lab: dict[str, dict[str, str]]) -> None:
    pids = {s.name: s.pid for s in manager.status()}
    done = run_topo("lab", "up", SOURCE_CLUSTER, TARGET_CLUSTER)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"{SOURCE_CLUSTER} {lab[SOURCE_CLUSTER]['bootstrap.servers']}",
        f"{TARGET_CLUSTER} {lab[TARGET_CLUSTER]['bootstrap.servers']}",
    ]
    assert {s.name: s.pid for s in manager.status()} == pids  # nothing was restarted


def test_status_json_follows_its_schema(lab: dict[str, dict[str, str]]) -> None:
    done = run_topo("lab", "status", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    schema = json.loads((ROOT / "schemas" / "lab-status.schema.json").read_text())
    jsonschema.validate(listed, schema)
    running = {c["name"]: c for c in listed if c["running"]}
    assert set(running) >= {SOURCE_CLUSTER, TARGET_CLUSTER}
    assert running[SOURCE_CLUSTER]["bootstrap"] == lab[SOURCE_CLUSTER]["bootstrap.servers"]
    assert isinstance(running[SOURCE_CLUSTER]["pid"], int)


def test_a_taken_port_is_one_clear_error(lab_dir: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        done = run_topo("lab", "up", "itest-squatted", "--port", str(port))
    assert done.returncode == 1
    [line] = done.stderr.splitlines()[-1:]
    assert f"port {port} for lab cluster itest-squatted is in use" in line
    assert "Traceback" not in done.stderr


def test_a_stopped_cluster_is_reported_restarted_and_keeps_its_data(
    lab_dir: Path, topic_name: str
) -> None:
    name = "itest-restart"
    [started] = manager.up([manager.UpRequest(name)])
    config = manager.admin_config(name)
    records.create_topic(config, topic_name, 1)
    records.produce(config, sample(topic_name, 4, partitions=1))

    assert started.pid is not None
    os.kill(started.pid, signal.SIGKILL)  # a crash, not a clean stop
    os.waitpid(started.pid, 0)
    [crashed] = [s for s in manager.status() if s.name == name]
    assert not crashed.running and crashed.pid is None
    with pytest.raises(KafkaUnavailableError):
        records.read_topic({**config, "socket.connection.setup.timeout.ms": "2000"}, topic_name, 5)

    [restarted] = manager.up([manager.UpRequest(name)])
    assert restarted.running and restarted.pid != started.pid
    assert len(records.read_topic(config, topic_name)) == 4

    done = run_topo("lab", "down", name)
    assert done.returncode == 0, done.stderr
    port = restarted.bootstrap.rsplit(":", 1)[1]
    assert not process.port_in_use("127.0.0.1", int(port))
    assert not manager.is_running(name)


def test_a_broker_that_fails_to_start_names_the_cause_and_its_log(lab_dir: Path) -> None:
    name = "itest-broken"
    manager.up([manager.UpRequest(name)])
    manager.down([name])
    meta = state.data_dir(name) / "meta.properties"
    meta.write_text(meta.read_text().replace("node.id=1", "node.id=7"))  # not this broker's

    with pytest.raises(LabError) as failure:
        manager.up([manager.UpRequest(name)])
    message = str(failure.value)
    assert message.startswith(f"lab cluster {name} did not start: ")
    assert f"(log: {state.server_log(name)})" in message
    assert not manager.is_running(name)
    manager.down([name], purge=True)
    assert not state.cluster_dir(name).exists()
