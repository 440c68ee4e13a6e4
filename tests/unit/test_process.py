import socket
from pathlib import Path

import pytest

from topology.core.errors import ToolMissingError
from topology.lab import process


def test_cluster_id_is_kafka_shaped() -> None:
    cluster_id = process.new_cluster_id()
    assert len(cluster_id) == 22 and "=" not in cluster_id
    assert cluster_id != process.new_cluster_id()


def test_port_in_use_sees_a_listening_socket() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert process.port_in_use("127.0.0.1", port)
    assert not process.port_in_use("127.0.0.1", port)


def test_last_problem_picks_the_last_error_line_without_its_timestamp(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "[2026-01-01 00:00:00,000] INFO starting (kafka.Kafka)\n"
        "[2026-01-01 00:00:01,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka)\n"
        "[2026-01-01 00:00:02,000] INFO shut down (kafka.Kafka)\n"
    )
    assert process.last_problem(log) == "ERROR Exiting Kafka due to fatal exception (kafka.Kafka)"
    assert process.last_problem(tmp_path / "absent.log") == "no error was logged"


def test_missing_java_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(ToolMissingError, match="Java 17"):
        process.java()
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissingError, match="not found"):
        process.java()


def test_old_java_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(ToolMissingError, match="is Java 11"):
        process.java()


def test_a_spawned_broker_is_given_none_of_its_callers_descriptors(tmp_path: Path) -> None:
    import os

    from topology.lab.process import _close_inherited

    with (tmp_path / "held.lock").open("w") as held:
        closed = {fd for _action, fd in _close_inherited()}
        assert held.fileno() in closed
    assert not closed & {0, 1, 2}
    assert all(action == os.POSIX_SPAWN_CLOSE for action, _fd in _close_inherited())
