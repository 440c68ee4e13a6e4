"""`topo lab up | down | status`: start, stop and list lab clusters.

Clusters start in parallel: every JVM is launched first, then each is probed until it
accepts a record and returns it to a consumer.
"""

import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from topology import maven
from topology.errors import KafkaUnavailableError, LabError
from topology.lab import process, state, tls
from topology.lab.spec import (
    ADMIN_USER,
    HOST,
    SCRAM_MECHANISM,
    LabCluster,
    check_name,
    client_config,
    default_port,
    server_properties,
)

BROKER_JARS = "kafka-broker"
START_TIMEOUT = 120.0
PORT_RELEASE_TIMEOUT = 15.0

Report = Callable[[str], None]


@dataclass(frozen=True)
class UpRequest:
    name: str
    port: int | None = None
    sasl: bool = False
    tls: bool = False


@dataclass(frozen=True)
class LabStatus:
    name: str
    bootstrap: str
    security_protocol: str
    pid: int | None
    running: bool
    log_file: str

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "bootstrap": self.bootstrap,
            "security_protocol": self.security_protocol, "pid": self.pid,
            "running": self.running, "log_file": self.log_file,
        }  # fmt: skip


def config_path(name: str) -> Path:
    return state.cluster_dir(name) / "server.properties"


def admin_config(name: str) -> dict[str, str]:
    """librdkafka settings to reach a lab cluster as its admin (for tests and the demo)."""
    record = _known(name)
    password = state.password_file(name).read_text().strip() if record.cluster.sasl else None
    ca = str(tls.ca_pem()) if record.cluster.tls else None
    return client_config(record.cluster, admin_password=password, ca_pem=ca)


def is_running(name: str) -> bool:
    record = state.load(name)
    return record is not None and process.is_broker(record.pid, config_path(name))


def up(requests: list[UpRequest], report: Report | None = None) -> list[LabStatus]:
    """Start every requested cluster that is not running, then prove each one serves.

    Running clusters are not restarted, only probed: one left starting by an interrupted
    `up` is thereby waited for too.
    """
    say = report or (lambda _line: None)
    clusters = [_desired(request) for request in requests]
    to_start = [cluster for cluster in clusters if not is_running(cluster.name)]
    pids = {}
    if to_start:
        java_bin = process.java()
        lib = maven.resolve(BROKER_JARS, report=say)[0].parent
        for cluster in to_start:
            _check_ports_free(cluster)
        for cluster in to_start:
            say(f"starting lab cluster {cluster.name} on {cluster.bootstrap}")
            pids[cluster.name] = _start(cluster, java_bin, lib)
    for cluster in clusters:
        pid = pids.get(cluster.name) or _known(cluster.name).pid
        assert pid is not None
        _wait_until_serving(cluster, pid)
    return [status_of(cluster.name) for cluster in clusters]


def down(names: list[str], purge: bool = False, report: Report | None = None) -> list[str]:
    """Stop the named clusters (every one when `names` is empty); `purge` deletes their data."""
    say = report or (lambda _line: None)
    targets = names or state.all_names()
    for name in targets:
        _known(name)
    for name in targets:
        record = _known(name)
        if is_running(name):
            say(f"stopping lab cluster {name}")
            assert record.pid is not None
            process.stop(record.pid, config_path(name))
            _wait_ports_released(record.cluster)
        state.save(state.LabRecord(cluster=record.cluster, pid=None))
        if purge:
            shutil.rmtree(state.cluster_dir(name))
    return targets


def status() -> list[LabStatus]:
    return [status_of(name) for name in state.all_names()]


def status_of(name: str) -> LabStatus:
    record = _known(name)
    running = process.is_broker(record.pid, config_path(name))
    return LabStatus(
        name=name,
        bootstrap=record.cluster.bootstrap,
        security_protocol=record.cluster.security_protocol,
        pid=record.pid if running else None,
        running=running,
        log_file=str(state.server_log(name)),
    )


def _known(name: str) -> state.LabRecord:
    record = state.load(check_name(name))
    if record is None:
        known = ", ".join(state.all_names()) or "none"
        raise LabError(f"there is no lab cluster named {name!r} (known: {known})")
    return record


def _desired(request: UpRequest) -> LabCluster:
    """The cluster a request means, checked against what already exists under that name."""
    name = check_name(request.name)
    record = state.load(name)
    port = request.port or (record.cluster.port if record else default_port(name))
    wanted = LabCluster(name=name, port=port, sasl=request.sasl, tls=request.tls)
    if record is None:
        return wanted
    if (record.cluster.sasl, record.cluster.tls) != (wanted.sasl, wanted.tls):
        raise LabError(
            f"lab cluster {name} exists as {record.cluster.security_protocol}, not "
            f"{wanted.security_protocol}; remove it first with `topo lab down {name} --purge`"
        )
    if record.cluster.port != port and is_running(name):
        raise LabError(
            f"lab cluster {name} is already running on {record.cluster.bootstrap}; "
            f"stop it with `topo lab down {name}` to move it to port {port}"
        )
    return wanted


def _check_ports_free(cluster: LabCluster) -> None:
    for port in (cluster.port, cluster.controller_port):
        if process.port_in_use(HOST, port):
            raise LabError(
                f"port {port} for lab cluster {cluster.name} is in use by another process; "
                f"choose other ports with `topo lab up {cluster.name} --port N` "
                "(it uses N and N+1)"
            )


def _start(cluster: LabCluster, java_bin: str, lib: Path) -> int:
    name = cluster.name
    data = state.data_dir(name)
    password = _admin_password(name) if cluster.sasl else None
    tls_files = tls.broker_files(name) if cluster.tls else None
    config = config_path(name)
    state.write_private(config, server_properties(cluster, str(data), password, tls_files))
    if not (data / "meta.properties").exists():
        scram = f"{SCRAM_MECHANISM}=[name={ADMIN_USER},password={password}]" if password else None
        process.format_storage(java_bin, lib, config, state.console_log(name), scram)
    pid = process.start_broker(java_bin, lib, config, state.logs_dir(name), state.console_log(name))
    state.save(state.LabRecord(cluster=cluster, pid=pid))
    return pid


def _wait_until_serving(cluster: LabCluster, pid: int) -> None:
    from topology.kafka import probe  # confluent_kafka loads only when a cluster is probed

    name = cluster.name
    config = config_path(name)
    try:
        probe.wait_until_serving(
            admin_config(name), START_TIMEOUT, still_starting=lambda: process.is_broker(pid, config)
        )
    except KafkaUnavailableError as problem:
        process.stop(pid, config, grace_seconds=5)
        state.save(state.LabRecord(cluster=cluster, pid=None))
        cause = process.last_problem(state.server_log(name), state.console_log(name))
        if cause == "no error was logged":
            cause = str(problem)
        raise LabError(
            f"lab cluster {name} did not start: {cause} (log: {state.server_log(name)})"
        ) from None


def _wait_ports_released(cluster: LabCluster) -> None:
    deadline = time.monotonic() + PORT_RELEASE_TIMEOUT
    while time.monotonic() < deadline:
        if not any(process.port_in_use(HOST, p) for p in (cluster.port, cluster.controller_port)):
            return
        time.sleep(0.2)
    raise LabError(f"lab cluster {cluster.name} stopped but port {cluster.port} is still held")


def _admin_password(name: str) -> str:
    """The cluster's SASL admin password: made once, kept in a file only the owner reads."""
    path = state.password_file(name)
    if path.exists():
        return path.read_text().strip()
    password = secrets.token_urlsafe(24)
    state.write_private(path, password + "\n")
    return password
