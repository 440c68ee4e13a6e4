"""`topo lab up | down | status`: start, stop and list lab clusters.

Clusters start in parallel: every JVM is launched first, then each is probed until it
accepts a record and returns it to a consumer.
"""

import contextlib
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topology.core.errors import KafkaUnavailableError, LabError, ToolMissingError
from topology.host import maven
from topology.lab import kdc, process, state, tls
from topology.lab.spec import (
    ADMIN_USER,
    BROKER_USER,
    HOST,
    SCRAM_MECHANISM,
    Credentials,
    LabCluster,
    broker_client_config,
    check_name,
    check_security,
    client_config,
    default_port,
    security_summary,
    server_properties,
    topology_cluster,
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
    mtls: bool = False
    mechanisms: tuple[str, ...] = (SCRAM_MECHANISM,)
    users: tuple[str, ...] = ()
    jwks_url: str | None = None
    kerberos: bool = False


@dataclass(frozen=True)
class LabStatus:
    name: str
    bootstrap: str
    security_protocol: str
    pid: int | None
    running: bool
    log_file: str
    sasl_mechanisms: tuple[str, ...] = ()
    mtls_bootstrap: str | None = None
    users: tuple[str, ...] = ()
    realm: str | None = None  # a Kerberized cluster's, and its clients' krb5.conf
    krb5_conf: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "bootstrap": self.bootstrap,
            "security_protocol": self.security_protocol,
            "pid": self.pid,
            "running": self.running,
            "log_file": self.log_file,
            "sasl_mechanisms": list(self.sasl_mechanisms),
            "mtls_bootstrap": self.mtls_bootstrap,
            "users": list(self.users),
            "realm": self.realm,
            "krb5_conf": self.krb5_conf,
        }


def config_path(name: str) -> Path:
    return state.cluster_dir(name) / "server.properties"


def admin_config(name: str) -> dict[str, str]:
    """librdkafka settings to reach a lab cluster as its admin (for tests and the demo)."""
    return user_config(name, ADMIN_USER)


def user_config(
    name: str, user: str, *, mechanism: str | None = None, mtls: bool | None = None
) -> dict[str, str]:
    """librdkafka settings to reach a lab cluster as one of its users: with a password (the
    first SASL mechanism unless `mechanism` says), or a certificate (`mtls`, or a cluster
    whose only login is one)."""
    return client_config(
        _known(name).cluster, credentials(name, user), mechanism=mechanism, mtls=mtls
    )


def topology_entry(
    name: str, user: str, *, mechanism: str | None = None, mtls: bool | None = None
) -> dict[str, Any]:
    """What a topology's `clusters.<name>` says to reach a lab cluster as `user`."""
    cluster = _known(name).cluster
    who = credentials(name, user)
    password = str(state.user_password_file(name, user)) if cluster.sasl else None
    return topology_cluster(cluster, who, password, mechanism=mechanism, mtls=mtls)


def credentials(name: str, user: str) -> Credentials:
    """Where a user's secrets are: paths and, for SASL, the password itself (tests only)."""
    cluster = _known(name).cluster
    if user not in cluster.principals:
        known = ", ".join(cluster.principals) if cluster.authorizes else "none"
        raise LabError(f"lab cluster {name} has no user {user!r} (users: {known})")
    password_file = state.user_password_file(name, user)
    password = password_file.read_text().strip() if cluster.sasl else None
    certificate = key = None
    if cluster.mtls:
        certificate, key = (str(path) for path in tls.user_files(name, user))
    ca = str(tls.ca_pem()) if cluster.tls else None
    keytab = str(kdc.keytab(name, user)) if cluster.kerberos else None
    return Credentials(user, password, ca, certificate, key, keytab)


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
    if any(cluster.kerberos for cluster in to_start):
        _check_kerberos_tools()
    pids = {}
    if to_start:
        java_bin = process.java()
        lib = maven.resolve(BROKER_JARS, report=say)[0].parent
        for cluster in to_start:
            kdc.stop(cluster.name)  # a KDC left by a broker that died: started again with it
            _check_ports_free(cluster)
        for cluster in to_start:
            say(f"starting lab cluster {cluster.name} on {cluster.bootstrap}")
            try:
                pids[cluster.name] = _start(cluster, java_bin, lib)
            except Exception:
                kdc.stop(cluster.name)  # started first; the broker did not
                raise
    for cluster in clusters:
        if cluster.kerberos:
            kdc.start(cluster)  # a running broker's KDC, if it was stopped
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
            kdc.stop(name)
            _wait_ports_released(record.cluster)
        kdc.stop(name)
        state.save(state.LabRecord(cluster=record.cluster, pid=None))
        if purge:
            shutil.rmtree(state.cluster_dir(name))
    return targets


def status() -> list[LabStatus]:
    return [status_of(name) for name in state.all_names()]


def status_of(name: str) -> LabStatus:
    record = _known(name)
    running = process.is_broker(record.pid, config_path(name))
    cluster = record.cluster
    return LabStatus(
        name=name,
        bootstrap=cluster.bootstrap,
        security_protocol=cluster.security_protocol,
        pid=record.pid if running else None,
        running=running,
        log_file=str(state.server_log(name)),
        sasl_mechanisms=cluster.mechanisms if cluster.sasl else (),
        mtls_bootstrap=cluster.mtls_bootstrap,
        users=cluster.principals if cluster.authorizes else (),
        realm=cluster.realm if cluster.kerberos else None,
        krb5_conf=str(kdc.krb5_conf(name)) if cluster.kerberos else None,
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
    users = tuple(dict.fromkeys((*(record.cluster.users if record else ()), *request.users)))
    mechanisms = request.mechanisms if request.sasl else (SCRAM_MECHANISM,)
    asked = LabCluster(
        name,
        port,
        request.sasl,
        request.tls,
        request.mtls,
        mechanisms,
        users,
        request.jwks_url,
        request.kerberos,
    )
    wanted = check_security(asked)
    if record is None:
        return wanted
    if _security(record.cluster) != _security(wanted):
        raise LabError(
            f"lab cluster {name} exists as {_security(record.cluster)}, not "
            f"{_security(wanted)}; remove it first with `topo lab down {name} --purge`"
        )
    if users != record.cluster.users and is_running(name):
        added = ", ".join(u for u in users if u not in record.cluster.users)
        raise LabError(
            f"lab cluster {name} is running without user(s) {added}; stop it with "
            f"`topo lab down {name}`, then `up` again with --user"
        )
    if record.cluster.port != port and is_running(name):
        raise LabError(
            f"lab cluster {name} is already running on {record.cluster.bootstrap}; "
            f"stop it with `topo lab down {name}` to move it to port {port}"
        )
    return wanted


def _security(cluster: LabCluster) -> str:
    """How clients log in, in words: what must match for a cluster to be reused."""
    mechanisms = cluster.mechanisms if cluster.sasl else ()
    summary = security_summary(cluster.security_protocol, mechanisms, cluster.mtls_bootstrap)
    return summary + (f", tokens from {cluster.jwks_url}" if cluster.jwks_url else "")


def _check_ports_free(cluster: LabCluster) -> None:
    for port in cluster.ports:
        if process.port_in_use(HOST, port):
            raise LabError(
                f"port {port} for lab cluster {cluster.name} is in use by another process; "
                f"choose other ports with `topo lab up {cluster.name} --port N` "
                f"(it uses N to N+{max(cluster.ports) - cluster.port})"
            )


def _start(cluster: LabCluster, java_bin: str, lib: Path) -> int:
    name = cluster.name
    data = state.data_dir(name)
    passwords = _passwords(cluster)
    tls_files = tls.broker_files(name) if cluster.tls else None
    if cluster.mtls:
        for user in cluster.principals:
            tls.user_files(name, user)
    java_options = cluster.java_options
    kerberos_files = None
    if cluster.kerberos:
        kerberos_files = kdc.prepare(cluster)
        kdc.start(cluster)
        java_options += kdc.java_options(name)
    config = config_path(name)
    properties = server_properties(cluster, str(data), passwords, tls_files, kerberos_files)
    state.write_private(config, properties)
    if not (data / "meta.properties").exists():
        # SCRAM logins are made through the admin API once the broker serves, never with the
        # storage tool's --add-scram: a command line is readable by every user of the machine.
        process.format_storage(java_bin, lib, config, state.console_log(name))
    pid = process.start_broker(
        java_bin, lib, config, state.logs_dir(name), state.console_log(name), java_options
    )
    state.save(state.LabRecord(cluster=cluster, pid=pid))
    return pid


def _wait_until_serving(cluster: LabCluster, pid: int) -> None:
    from topology.kafka import probe  # confluent_kafka loads only when a cluster is probed

    name = cluster.name
    config = config_path(name)
    alive = lambda: process.is_broker(pid, config)  # noqa: E731
    try:
        # A cluster with logins first serves its own broker (the admin's SCRAM login does not
        # exist yet on a new one), then, once the logins are made, its admin.
        first = _broker_config(cluster) if cluster.authorizes else admin_config(name)
        probe.wait_until_serving(first, START_TIMEOUT, still_starting=alive)
        if cluster.sasl and SCRAM_MECHANISM in cluster.mechanisms:
            _add_scram_users(cluster)
        if cluster.authorizes:
            with kdc.client_environment(name) if cluster.kerberos else contextlib.nullcontext():
                probe.wait_until_serving(admin_config(name), START_TIMEOUT, still_starting=alive)
    except KafkaUnavailableError as problem:
        process.stop(pid, config, grace_seconds=5)
        kdc.stop(name)
        state.save(state.LabRecord(cluster=cluster, pid=None))
        cause = process.last_problem(state.server_log(name), state.console_log(name))
        if cause == "no error was logged":
            cause = str(problem)
        raise LabError(
            f"lab cluster {name} did not start: {cause} (log: {state.server_log(name)})"
        ) from None


def _check_kerberos_tools() -> None:
    """Before anything starts: MIT's KDC programs, and a Kafka client that speaks GSSAPI (the
    lab proves a cluster serves by logging in as its admin)."""
    from topology.kafka.client import require_gssapi

    problem = kdc.missing()
    if problem:
        raise ToolMissingError(problem)
    require_gssapi("`topo lab up --kerberos`")


def _wait_ports_released(cluster: LabCluster) -> None:
    deadline = time.monotonic() + PORT_RELEASE_TIMEOUT
    while time.monotonic() < deadline:
        if not any(process.port_in_use(HOST, p) for p in cluster.ports):
            return
        time.sleep(0.2)
    raise LabError(f"lab cluster {cluster.name} stopped but port {cluster.port} is still held")


def _passwords(cluster: LabCluster) -> dict[str, str]:
    """Every SASL password the broker config needs, by user."""
    users = list(cluster.principals) if cluster.sasl else []
    if cluster.authorizes:
        users.append(BROKER_USER)
    return {user: _password(cluster.name, user) for user in users}


def _password(name: str, user: str) -> str:
    """A user's SASL password: made once, kept in a file only the owner reads."""
    path = state.user_password_file(name, user)
    if path.exists():
        return path.read_text().strip()
    password = secrets.token_urlsafe(24)
    state.write_private(path, password + "\n")
    return password


def _add_scram_users(cluster: LabCluster) -> None:
    """SCRAM logins live in the cluster's metadata: made (again) through the admin API, by
    the broker's own login on its internal listener."""
    from topology.kafka import probe

    passwords = {user: _password(cluster.name, user) for user in cluster.principals}
    probe.upsert_scram_users(_broker_config(cluster), passwords, SCRAM_MECHANISM)


def _broker_config(cluster: LabCluster) -> dict[str, str]:
    """The broker's own login (a super user), on the loopback internal listener."""
    return broker_client_config(cluster, _password(cluster.name, BROKER_USER))
