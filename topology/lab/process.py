"""The broker's JVM: find Java, format storage, start it detached, stop it, check ports."""

import base64
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

from topology.core.errors import LabError, ToolMissingError

MIN_JAVA = 17
BROKER_MAIN = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
# Small enough that three brokers and a Spark driver fit easily in a laptop; measured in
# docs/lab.md.
HEAP_OPTS = ["-Xms128m", "-Xmx512m"]
JVM_OPTS = [
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.awt.headless=true",
]
LOG4J_CONFIG = Path(__file__).resolve().parent.parent / "resources" / "lab" / "log4j2.properties"


def java() -> str:
    """The `java` to run brokers with (JAVA_HOME first, then PATH), checked to be 17+."""
    home = os.environ.get("JAVA_HOME")
    candidate = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not candidate or not Path(candidate).exists():
        raise ToolMissingError(
            f"Java {MIN_JAVA}+ is needed to run lab clusters but `java` was not found "
            "(set JAVA_HOME or put java on PATH)"
        )
    shown = subprocess.run(
        [candidate, "-version"], capture_output=True, text=True, check=False
    ).stderr
    match = re.search(r'version "(\d+)(?:\.(\d+))?', shown)
    major = int(match.group(1)) if match else 0
    if major == 1 and match and match.group(2):  # "1.8.0_392" style
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise ToolMissingError(
            f"Java {MIN_JAVA}+ is needed to run lab clusters; {candidate} is Java {major or '?'}"
        )
    return candidate


def new_cluster_id() -> str:
    """A KRaft cluster id: a random UUID in Kafka's URL-safe base64 form.

    One id in 64 would start with '-', which `kafka-storage format -t <id>` reads as an option;
    like Kafka's own Uuid.randomUuid, such an id is drawn again.
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def format_storage(java_bin: str, lib: Path, config: Path, log: Path) -> None:
    """Format the KRaft log dirs once (no secret on the command line: logins are made later)."""
    command = [
        java_bin,
        *HEAP_OPTS,
        "-cp",
        f"{lib}/*",
        STORAGE_TOOL,
        "format",
        "-t",
        new_cluster_id(),
        "-c",
        str(config),
        "--ignore-formatted",
    ]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise LabError(f"formatting the broker's storage failed: {last_problem(log)} (log: {log})")


def start_broker(
    java_bin: str,
    lib: Path,
    config: Path,
    logs: Path,
    console: Path,
    java_options: tuple[str, ...] = (),
) -> int:
    """Start a broker detached from this process (its own session) and return its pid."""
    logs.mkdir(parents=True, exist_ok=True)
    command = [
        java_bin,
        *HEAP_OPTS,
        *JVM_OPTS,
        *java_options,
        f"-Dkafka.logs.dir={logs}",
        f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
        "-cp",
        f"{lib}/*",
        BROKER_MAIN,
        str(config),
    ]
    # posix_spawn rather than Popen: the broker outlives this process by design, and a
    # Popen object would warn when collected while its child still runs.
    pid = os.posix_spawn(
        java_bin,
        command,
        dict(os.environ),
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(console), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644),
            (os.POSIX_SPAWN_DUP2, 1, 2),
            *_close_inherited(),
        ],
        setsid=True,
    )
    _wait_for_exec(pid)
    return pid


def _close_inherited() -> list[tuple[int, int]]:
    """posix_spawn passes on every descriptor not marked close-on-exec: a long-lived broker
    would hold its caller's pipes (`topo lab up | tee` would never end) and file locks."""
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return []
    return [(os.POSIX_SPAWN_CLOSE, fd) for fd in sorted(open_fds) if fd > 2 and _is_open(fd)]


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False  # the descriptor that listed /proc/self/fd, closed since
    return True


def _wait_for_exec(pid: int, timeout: float = 5.0) -> None:
    """posix_spawn may return before the child has exec'd java; until then /proc shows no
    command line, and is_broker() would take the broker for a stranger."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and cmdline.exists():
        try:
            if BROKER_MAIN.encode() in cmdline.read_bytes().split(b"\0"):
                return
        except OSError:
            return
        time.sleep(0.01)


def is_broker(pid: int | None, config: Path) -> bool:
    """Whether `pid` is alive and is the broker started with `config` (not a reused pid)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.exists():  # no procfs (macOS): trust the signal check
        return True
    try:
        args = cmdline.read_bytes().split(b"\0")
    except OSError:
        return False
    if is_zombie(pid):
        return False
    return BROKER_MAIN.encode() in args and str(config).encode() in args


def is_zombie(pid: int) -> bool:
    """Exited but not yet reaped by its parent: no longer running, though its pid exists."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"


def stop(pid: int, config: Path, grace_seconds: float = 30.0) -> None:
    """Stop a broker: SIGTERM (a clean controlled shutdown), SIGKILL after the grace period."""
    if not is_broker(pid, config):
        return
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline:
        _reap(pid)
        if not is_broker(pid, config):
            return
        time.sleep(0.2)
    _signal_group(pid, signal.SIGKILL)
    for _ in range(50):
        _reap(pid)
        if not is_broker(pid, config):
            return
        time.sleep(0.1)
    raise LabError(f"broker process {pid} did not stop, even after SIGKILL")


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _reap(pid: int) -> None:
    """Collect the exit status when the broker is our own child, so it does not linger."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def last_problem(*logs: Path) -> str:
    """The most telling line of a failed JVM's logs: its last ERROR or exception line."""
    for log in logs:
        if not log.exists():
            continue
        lines = log.read_text(errors="replace").splitlines()
        for line in reversed(lines):
            if " ERROR " in line or "Exception" in line or line.startswith("Error"):
                return _shorten(line)
    return "no error was logged"


def _shorten(line: str) -> str:
    line = re.sub(r"^\[[^\]]*\]\s*", "", line.strip())  # drop the log timestamp
    return line if len(line) <= 300 else line[:297] + "..."
