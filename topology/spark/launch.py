"""Start, run and stop the replication driver with `spark-submit`, for both runners.

The `local` runner submits to `local[*]` on this machine; the `spark` runner to the master
URL the topology names. Everything else is the same command, so outgrowing one machine is one
setting. A continuous driver runs detached (its own session, output in driver.log); `--once`
runs in the foreground and relays the driver's progress lines.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from topology import jobstate, paths
from topology.errors import TopoError
from topology.jobs import JobSpec
from topology.spark import installed
from topology.spark.conf import BASE_CONF
from topology.spark.interceptor import interceptor_jar
from topology.spark.jars import kafka_connector_jars

DRIVER_PROGRAM = Path(__file__).parent.parent / "resources" / "spark" / "topo_driver.py"
STARTUP_TIMEOUT = 180.0
STOP_TIMEOUT = 60.0


@dataclass(frozen=True)
class Submission:
    owner: str
    topology_file: str  # absolute
    topology_sha256: str
    runner: str  # local | spark
    master: str
    spark_conf: Mapping[str, str]
    specs: tuple[JobSpec, ...]


def _spark_submit() -> str:
    from pyspark.find_spark_home import _find_spark_home

    return str(Path(_find_spark_home()) / "bin" / "spark-submit")  # type: ignore[no-untyped-call]


def command(submission: Submission, mode: str, report: Callable[[str], None]) -> list[str]:
    """The spark-submit command line. Spark settings go in a private properties file, not on
    the command line: any user of the machine can read a process's arguments, and a setting
    (an object store's key, say) may be a secret."""
    installed.require("running replication")
    jars = kafka_connector_jars(report=report)
    jars.append(interceptor_jar(jars))
    conf = {k: v for k, v in BASE_CONF.items() if k != "spark.jars"}
    conf.update(submission.spark_conf)
    folder = private_folder(submission.owner)
    settings = folder / SPARK_PROPERTIES
    lines = (
        f"{_escaped(key, key=True)}={_escaped(value)}\n" for key, value in sorted(conf.items())
    )
    paths.write_private(settings, "".join(lines))
    # --load-spark-defaults: a properties file would otherwise replace the machine's
    # spark-defaults.conf (SPARK_CONF_DIR) instead of adding to it, as --conf did.
    args = [_spark_submit(), "--master", submission.master, "--name", f"topo-{submission.owner}",
            "--properties-file", str(settings), "--load-spark-defaults",
            "--jars", ",".join(str(jar) for jar in jars)]  # fmt: skip
    topology = ["--topology", submission.topology_file, "--sha256", submission.topology_sha256]
    return [*args, str(DRIVER_PROGRAM), "--state", str(folder), "--mode", mode, *topology]


SPARK_PROPERTIES = "spark.properties"


def private_folder(owner: str) -> Path:
    """The job's state folder, readable by its owner only (it holds logs and settings)."""
    folder = jobstate.folder(owner)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    return folder


def _escaped(text: str, key: bool = False) -> str:
    """Text as java.util.Properties reads it back: backslashes and line ends escaped, and in
    a key the characters that would end it (`=`, `:`, white space) or make it a comment."""
    text = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    if key:
        text = re.sub(r"([=:\s#!])", r"\\\1", text)
    return text


def _forget_settings(owner: str) -> None:
    """spark-submit has read its settings once the driver runs (or has exited)."""
    (jobstate.folder(owner) / SPARK_PROPERTIES).unlink(missing_ok=True)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable  # executors' Python workers (exactly-once writes)
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def start(submission: Submission, report: Callable[[str], None]) -> jobstate.Driver:
    """Start the continuous driver detached; return once it reports its flows running."""
    try:
        return _start(submission, report)
    finally:
        _forget_settings(submission.owner)  # read by spark-submit by now, or never will be


def _start(submission: Submission, report: Callable[[str], None]) -> jobstate.Driver:
    folder = private_folder(submission.owner)
    args = command(submission, "continuous", report)
    (folder / jobstate.STATUS).unlink(missing_ok=True)
    with (folder / jobstate.LOG).open("ab") as log:
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, env=_environment(),
                                   start_new_session=True)  # fmt: skip
    driver = jobstate.Driver(
        launcher_pid=process.pid,
        driver_pid=None,
        mode="continuous",
        runner=submission.runner,
        master=submission.master,
        topology_file=submission.topology_file,
        topology_sha256=submission.topology_sha256,
        started_at=time.time(),
        specs={spec.flow: spec.to_dict() for spec in submission.specs},
    )
    jobstate.write_driver(submission.owner, driver)
    report(f"starting the replication driver ({submission.runner}, {submission.master}); "
           f"log: {folder / jobstate.LOG}")  # fmt: skip
    _wait_until_running(submission.owner, process, folder)
    return driver


def _wait_until_running(owner: str, process: "subprocess.Popen[bytes]", folder: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise TopoError(
                f"the replication driver exited ({process.returncode}): {_last_line(folder)}"
            )
        status = jobstate.status(owner)
        if status is not None and status.get("state") == "running":
            return
        time.sleep(0.5)
    raise TopoError(f"the replication driver did not start in {STARTUP_TIMEOUT:.0f}s; see "
                    f"{folder / jobstate.LOG}")  # fmt: skip


def run_once(submission: Submission, report: Callable[[str], None]) -> int:
    """Copy what the sources hold now; the driver's progress lines are relayed to `report`."""
    try:
        code = _run_once(submission, report)
    finally:
        _forget_settings(submission.owner)
    if code != 0:
        folder = jobstate.folder(submission.owner)
        report(
            f"the driver exited with {code}: {_last_line(folder)} (log: {folder / jobstate.LOG})"
        )
    return code


def _run_once(submission: Submission, report: Callable[[str], None]) -> int:
    folder = private_folder(submission.owner)
    args = command(submission, "once", report)
    with (folder / jobstate.LOG).open("ab") as log:
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=log, env=_environment(), text=True)  # fmt: skip
        assert process.stdout is not None
        try:
            # spark-submit merges the program's stderr into its stdout: topo's own lines are
            # relayed, the rest (a traceback) goes to the log.
            for line in process.stdout:
                if line.startswith("topo: "):
                    report(line[len("topo: ") :].rstrip())
                else:
                    log.write(line.encode())
            return process.wait()
        except KeyboardInterrupt:
            process.send_signal(signal.SIGTERM)
            process.wait(STOP_TIMEOUT)
            raise


def stop(owner: str, report: Callable[[str], None]) -> bool:
    """Stop the running driver cleanly (SIGTERM to the driver program, which stops its
    queries); kill its process group if it has not exited within a minute. False when none
    was running."""
    driver = jobstate.running_driver(owner)
    if driver is None:
        return False
    report(f"stopping the replication driver of {owner} (pid {driver.driver_pid})")
    target = driver.driver_pid or driver.launcher_pid
    with contextlib.suppress(ProcessLookupError):
        os.kill(target, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline and jobstate.alive(driver.launcher_pid):
        time.sleep(0.3)
    if jobstate.alive(driver.launcher_pid):
        report("the driver did not stop in time; killing it (its checkpoints are kept)")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.launcher_pid, signal.SIGKILL)
    (jobstate.folder(owner) / jobstate.DRIVER).unlink(missing_ok=True)
    return True


def _last_line(folder: Path) -> str:
    try:
        lines = (folder / jobstate.LOG).read_text(errors="replace").splitlines()
    except OSError:
        return "no log"
    useful = [line for line in lines if line.startswith("topo: ") or "Error:" in line]
    return (useful or lines or ["no output"])[-1][:400]
