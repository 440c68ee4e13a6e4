"""A real standalone Spark cluster on localhost for tests: one master and its workers.

Both daemons are started from the Spark that ships in the pyspark wheel (`bin/spark-class`, so
Spark's own launcher adds the JVM flags its version needs), bound to 127.0.0.1 on free ports,
with their logs, configuration and the worker's application directories under one folder.
Each daemon runs in a process group of its own, so stopping it also ends the executors the
worker launched; `stop` never leaves a process behind, also after a `start` that failed halfway.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
DAEMON_MEMORY = "256m"
STOP_GRACE_SECONDS = 5.0
LOG_TAIL_LINES = 30


class SparkClusterError(RuntimeError):
    """The cluster did not start; the message ends with the daemons' last log lines."""


@dataclass(frozen=True)
class StandaloneSpark:
    master_url: str  # spark://127.0.0.1:PORT
    workdir: Path
    # The master's web UI; its /json/ lists workers and running and completed applications.
    master_web_url: str = ""
    spark_home: Path = field(default=Path(), repr=False)
    # Workers first: stop ends them before the master they report to.
    processes: tuple["subprocess.Popen[bytes]", ...] = field(default=(), repr=False, compare=False)
    cores: int = 2  # each worker's
    memory: str = "1g"
    workers: int = 1

    @property
    def master_log(self) -> Path:
        return self.workdir / "master.log"

    @property
    def worker_log(self) -> Path:
        return self.workdir / "worker.log"

    def executor_logs(self, app: str) -> dict[str, str]:
        """Each worker folder's executors' stderr for the application named `app`, joined:
        what of it ran on that worker."""
        listed = [*self.status().get("activeapps", []), *self.status().get("completedapps", [])]
        ids = {str(a["id"]) for a in listed if a.get("name") == app}
        found = {}
        for folder in sorted(self.workdir.glob("worker*/")):
            logs = [f for i in sorted(ids) for f in sorted(folder.glob(f"{i}/*/stderr"))]
            found[folder.name] = "\n".join(f.read_text(errors="replace") for f in logs)
        return found

    def status(self) -> dict[str, Any]:
        """The master's state as its web UI reports it (workers, activeapps, completedapps)."""
        return master_status(self.master_web_url)


def spark_home() -> Path:
    """The Spark the pyspark wheel ships (or $SPARK_HOME when set, as pyspark itself does)."""
    from pyspark.find_spark_home import _find_spark_home

    home = Path(_find_spark_home())  # type: ignore[no-untyped-call]
    if not (home / "bin" / "spark-class").is_file() or not (home / "jars").is_dir():
        raise SparkClusterError(f"no Spark installation at {home} (bin/spark-class, jars/)")
    return home


def free_port() -> int:
    """A port nothing listens on right now (the kernel's pick for a bind to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


# Straight to localhost: an http_proxy of the environment must not stand in between.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def master_status(web_url: str, timeout: float = 5) -> dict[str, Any]:
    with _DIRECT.open(f"{web_url}/json/", timeout=timeout) as response:
        status: dict[str, Any] = json.load(response)
        return status


def start(
    workdir: Path, cores: int = 2, memory: str = "1g", timeout: float = 60, workers: int = 1
) -> StandaloneSpark:
    """Start a master and `workers` workers each offering `cores` and `memory`; return once
    they have registered with the master, or raise SparkClusterError (nothing left running)."""
    home = spark_home()
    workdir.mkdir(parents=True, exist_ok=True)
    master_port, master_ui_port = free_port(), free_port()
    master_url = f"spark://{HOST}:{master_port}"
    master_web_url = f"http://{HOST}:{master_ui_port}"
    env = _environment(home, workdir)
    spark_class = str(home / "bin" / "spark-class")
    master_cmd = [
        spark_class,
        "org.apache.spark.deploy.master.Master",
        "--host",
        HOST,
        "--port",
        str(master_port),
        "--webui-port",
        str(master_ui_port),
    ]
    started: list[subprocess.Popen[bytes]] = []
    try:
        started.append(_spawn(master_cmd, env, workdir / "master.log", workdir))
        for number in range(1, workers + 1):
            started.append(_start_worker(home, workdir, master_url, cores, memory, number))
        cluster = StandaloneSpark(
            master_url,
            workdir,
            master_web_url,
            home,
            processes=tuple(reversed(started)),
            cores=cores,
            memory=memory,
            workers=workers,
        )
        _await_worker(cluster, timeout, wanted=workers)
    except BaseException:
        _stop_all(tuple(reversed(started)))
        raise
    return cluster


def kill_worker(cluster: StandaloneSpark) -> None:
    """kill -9 of one worker and the executors it launched (a machine lost), with no
    replacement: the others take its work."""
    worker, *rest = cluster.processes
    _signal_group(worker.pid, signal.SIGKILL)
    worker.wait()
    object.__setattr__(cluster, "processes", tuple(rest))  # gone: stop() ends the others


def replace_worker(cluster: StandaloneSpark, timeout: float = 60) -> None:
    """kill -9 of the worker and the executors it launched (a machine lost), then a new worker
    for the same master (the machine's replacement); returns once the master lists it ALIVE.
    `stop` ends the new worker with the rest."""
    worker, *rest = cluster.processes
    known = _worker_ids(cluster)
    _signal_group(worker.pid, signal.SIGKILL)
    worker.wait()
    fresh = _start_worker(
        cluster.spark_home, cluster.workdir, cluster.master_url, cluster.cores, cluster.memory
    )
    object.__setattr__(cluster, "processes", (fresh, *rest))  # stop() must end this one
    _await_worker(cluster, timeout, alive_other_than=known)


def _environment(home: Path, workdir: Path) -> dict[str, str]:
    conf_dir = workdir / "conf"  # empty: no spark-defaults.conf or spark-env.sh of the user's
    conf_dir.mkdir(exist_ok=True)
    # A port taken between free_port() and the JVM's bind fails loudly instead of Spark quietly
    # moving to the next port, which would make master_url wrong.
    daemon_opts = "-Dspark.port.maxRetries=0 -Dspark.master.rest.enabled=false"
    return {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_CONF_DIR": str(conf_dir),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
        "SPARK_DAEMON_JAVA_OPTS": daemon_opts,
        "SPARK_MASTER_OPTS": "",
        "SPARK_WORKER_OPTS": "",
        "SPARK_NO_DAEMONIZE": "1",
    }


def _start_worker(
    home: Path, workdir: Path, master_url: str, cores: int, memory: str, number: int = 1
) -> "subprocess.Popen[bytes]":
    name = "worker" if number == 1 else f"worker-{number}"
    worker_dir = workdir / name
    worker_dir.mkdir(exist_ok=True)
    worker_port, worker_ui_port = free_port(), free_port()
    worker_cmd = [
        str(home / "bin" / "spark-class"),
        "org.apache.spark.deploy.worker.Worker",
        "--host",
        HOST,
        "--port",
        str(worker_port),
        "--webui-port",
        str(worker_ui_port),
        "--cores",
        str(cores),
        "--memory",
        memory,
        "--work-dir",
        str(worker_dir),
        master_url,
    ]
    return _spawn(worker_cmd, _environment(home, workdir), workdir / f"{name}.log", workdir)


def _worker_ids(cluster: StandaloneSpark) -> set[str]:
    """The workers the master lists now (the dead one too, until it times out)."""
    try:
        return {str(w.get("id")) for w in cluster.status().get("workers", [])}
    except (OSError, ValueError):
        return set()


def stop(cluster: StandaloneSpark) -> None:
    """End the worker (and its executors), then the master; wait for all of them. Idempotent."""
    _stop_all(cluster.processes)


def _spawn(cmd: list[str], env: dict[str, str], log: Path, cwd: Path) -> "subprocess.Popen[bytes]":
    with log.open("ab") as out:
        return subprocess.Popen(
            cmd,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: executors included on stop
        )


def _await_worker(
    cluster: StandaloneSpark,
    timeout: float,
    alive_other_than: Collection[str] = (),
    wanted: int = 1,
) -> None:
    deadline = time.monotonic() + timeout
    last_error = "the master's web UI never answered"
    names = ["worker"] * (len(cluster.processes) - 1) + ["master"]
    while True:
        for name, process in zip(names, cluster.processes, strict=True):
            if process.poll() is not None:
                raise SparkClusterError(
                    f"the Spark {name} exited with code {process.returncode} while starting"
                    + _log_tails(cluster)
                )
        try:
            status = cluster.status()
        except (OSError, ValueError) as error:  # not listening yet, or a half-written page
            last_error = f"the master's web UI: {error}"
        else:
            alive = [
                w
                for w in status.get("workers", [])
                if w.get("state") == "ALIVE" and str(w.get("id")) not in alive_other_than
            ]
            if len(alive) >= wanted:
                return
            last_error = f"the master lists no ALIVE worker (workers: {status.get('workers')})"
        if time.monotonic() >= deadline:
            raise SparkClusterError(
                f"no worker registered with the Spark master {cluster.master_url} within "
                f"{timeout:g}s; last seen: {last_error}" + _log_tails(cluster)
            )
        time.sleep(0.25)


def _log_tails(cluster: StandaloneSpark) -> str:
    parts = []
    for log in (cluster.master_log, cluster.worker_log):
        try:
            lines = log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
        except FileNotFoundError:
            lines = ["(no log)"]
        parts.append(f"\n--- last lines of {log} ---\n" + "\n".join(lines))
    return "".join(parts)


def _stop_all(processes: tuple["subprocess.Popen[bytes]", ...]) -> None:
    for process in processes:
        _stop_group(process)


def _stop_group(process: "subprocess.Popen[bytes]") -> None:
    """SIGTERM to the daemon's process group, SIGKILL after the grace period; wait for the
    daemon, and until no process of its group (an executor the worker launched) remains."""
    group = process.pid  # start_new_session: the daemon leads its own group
    _signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while (process.poll() is None or _group_members(group)) and time.monotonic() < deadline:
        time.sleep(0.1)
    _signal_group(group, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while _group_members(group) and time.monotonic() < deadline:
        time.sleep(0.05)


def _signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _group_members(group: int) -> list[int]:
    """The live processes of a process group. Zombies do not count: they hold no port and no
    memory, and an orphan's zombie lingers until whoever adopted it reaps it."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members
