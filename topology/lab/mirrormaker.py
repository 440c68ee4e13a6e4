"""Apache Kafka MirrorMaker 2 in dedicated mode, run from Maven jars beside topo: the one MM2
runner of the side-by-side benchmark (benchmarks/mm2.py) and of the MM2 tests. Also MM2 as a
connector on a Kafka Connect cluster (`connect_worker`, `add_connector`), from the same jars.

Its configuration is what `topo export mm2` makes of a topology, plus the settings a lab needs
(`lab_settings`: one broker per cluster, so replication factors of 1, and where the internal
REST server listens when exactly-once asks for one). The JVM runs in its own session, so its
CPU can be counted apart from everything else, and logs to `<folder>/logs/server.log`.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from topology.core.errors import LabError
from topology.host import maven
from topology.lab import process

ARTIFACTS = "mirror-maker"  # topology/resources/maven/mirror-maker.xml
MAIN = "org.apache.kafka.connect.mirror.MirrorMaker"
CONNECT_MAIN = "org.apache.kafka.connect.cli.ConnectDistributed"
# Pinned to Spark's default driver memory (spark.driver.memory 1g), so the two replicators
# compared side by side have the same heap. (connect-mirror-maker.sh would give -Xmx2G.)
HEAP_OPTS = ["-Xms1g", "-Xmx1g"]
STARTED = "Kafka MirrorMaker started"  # MirrorMaker.start() logs it once every herder runs
CONNECT_STARTED = "Kafka Connect started"  # Connect.start() logs it once its REST server serves
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"  # MM2 copies bytes as they are
INTERNAL_TOPICS = (
    "checkpoints.topic",
    "heartbeats.topic",
    "offset-syncs.topic",
    "offset.storage",
    "config.storage",
    "status.storage",
)


def lab_settings(exactly_once: bool = False) -> dict[str, str]:
    """What an exported mm2.properties needs to run on lab clusters of one broker each."""
    settings = {"replication.factor": "1"}
    settings |= {f"{topic}.replication.factor": "1" for topic in INTERNAL_TOPICS}
    if exactly_once:  # the internal REST server KIP-618 needs in dedicated mode
        settings["dedicated.mode.enable.internal.rest"] = "true"
        settings["listeners"] = f"http://127.0.0.1:{_free_port()}"
    return settings


def properties_text(exported: str, settings: Mapping[str, str]) -> str:
    """`topo export mm2`'s text with `settings` appended (a later key wins in MM2's reader)."""
    lines = [f"{key} = {value}" for key, value in settings.items()]
    return (
        exported.rstrip("\n")
        + "\n\n# -- set for the lab by topology/lab/mirrormaker.py\n"
        + ("\n".join(lines) + "\n")
    )


@dataclass
class MirrorMaker:
    """A running MM2 process (the leader of its own session)."""

    pid: int
    folder: Path
    started_at: float  # time.time() when the JVM was spawned
    _process: "subprocess.Popen[bytes]"
    started: str = STARTED  # what its log says once it runs
    what: str = "MirrorMaker 2"

    @property
    def log(self) -> Path:
        return self.folder / "logs" / "server.log"

    def running(self) -> bool:
        return self._process.poll() is None

    def wait_started(self, timeout: float = 120) -> float:
        """Seconds from spawn until MM2 says it started; LabError if it exits or times out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                problem = process.last_problem(self.log, self.folder / "console.log")
                raise LabError(f"{self.what} exited ({self._process.returncode}): {problem}")
            with contextlib.suppress(OSError):
                if self.started in self.log.read_text(errors="replace"):
                    return time.time() - self.started_at
            time.sleep(0.2)
        raise LabError(f"{self.what} did not start within {timeout:.0f}s (log: {self.log})")

    def stop(self, grace_seconds: float = 30.0) -> int:
        """SIGTERM (MM2 stops its herders cleanly), SIGKILL after the grace period."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGTERM)
            try:
                return self._process.wait(grace_seconds)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.pid, signal.SIGKILL)
        return self._process.wait(10)


def start(
    properties: Path,
    folder: Path,
    clusters: tuple[str, ...] = (),
    report: Callable[[str], None] | None = None,
) -> MirrorMaker:
    """Start `MirrorMaker properties [--clusters ...]` in its own session; its output goes to
    `<folder>/console.log`. The jars are resolved with mvn on first use."""
    arguments = [str(properties)] + (["--clusters", *clusters] if clusters else [])
    return _spawn(MAIN, arguments, folder, STARTED, "MirrorMaker 2", report)


def _spawn(
    main: str,
    arguments: list[str],
    folder: Path,
    started: str,
    what: str,
    report: Callable[[str], None] | None = None,
) -> MirrorMaker:
    jars = maven.resolve(ARTIFACTS, report)
    if not jars:
        raise LabError(f"no jars were resolved for {ARTIFACTS}")
    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    command = [
        process.java(),
        *HEAP_OPTS,
        *process.JVM_OPTS,
        f"-Dkafka.logs.dir={logs}",
        f"-Dlog4j2.configurationFile={process.LOG4J_CONFIG}",
        "-cp",
        f"{jars[0].parent}/*",
        main,
        *arguments,
    ]
    with (folder / "console.log").open("ab") as console:
        started_at = time.time()
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=console,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return MirrorMaker(child.pid, folder, started_at, child, started, what)


@dataclass(frozen=True)
class ConnectWorker:
    """A Kafka Connect worker (distributed mode) and where its REST API listens."""

    process: MirrorMaker
    rest: str  # http://127.0.0.1:<port>


def connect_worker(
    bootstrap: str, group: str, topics: Mapping[str, str], folder: Path
) -> ConnectWorker:
    """Start a one-worker Connect cluster on the cluster at `bootstrap` (group `group`; its
    `topics`: `offsets`, `configs` and `status` to their names), as a user's own Connect
    cluster runs MM2's connectors, and wait until its REST API serves."""
    port = _free_port()
    settings = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        # as MM2's dedicated mode sets them: Connect's default header converter would
        # rewrite header values (bytes as base64 text)
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "offset.storage.topic": topics["offsets"],
        "config.storage.topic": topics["configs"],
        "status.storage.topic": topics["status"],
        "offset.flush.interval.ms": "2000",
        "listeners": f"http://127.0.0.1:{port}",
        **{f"{kind}.storage.replication.factor": "1" for kind in ("offset", "config", "status")},
    }
    folder.mkdir(parents=True, exist_ok=True)
    properties = folder / "worker.properties"
    properties.write_text("".join(f"{key} = {value}\n" for key, value in settings.items()))
    worker = _spawn(CONNECT_MAIN, [str(properties)], folder, CONNECT_STARTED, "Kafka Connect")
    try:
        worker.wait_started(180)
    except LabError:
        worker.stop()  # its own session: nothing else would stop it
        raise
    return ConnectWorker(worker, f"http://127.0.0.1:{port}")


def add_connector(worker: ConnectWorker, name: str, config: Mapping[str, str]) -> None:
    """Create connector `name` with `config` through the worker's REST API."""
    body = json.dumps({"name": name, "config": dict(config)}).encode()
    request = urllib.request.Request(
        f"{worker.rest}/connectors", body, {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60):
            pass
    except urllib.error.HTTPError as problem:
        detail = problem.read().decode(errors="replace")[:500]
        raise LabError(f"Connect refused connector {name}: {problem.code} {detail}") from None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
