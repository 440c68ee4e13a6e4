"""Start, run and stop the replication driver with `spark-submit`, for both runners.

The `local` runner submits to `local[*]` on this machine; the `spark` runner to the master
URL the topology names (client mode: the driver runs here, executors on the workers).
Everything else is the same command, so outgrowing one machine is one setting.

`spawn` starts the driver on a jobs document and returns a handle `topo run` supervises
(`ops.supervise`); `start_supervisor` starts `topo run` itself detached, the local runner's
background mode (output in driver.log); `--once` runs the driver in the foreground and relays
its progress lines.
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from topology.core import kerberos, msk_iam
from topology.core.errors import TopoError
from topology.core.jobs import JobsDocument
from topology.host import jobstate, maven, paths
from topology.spark import installed
from topology.spark.conf import (
    BASE_CONF,
    local_master,
    with_driver_heap,
    with_java_options,
    with_slot_plugin,
)
from topology.spark.jars import kafka_connector_jars
from topology.spark.topojar import topo_jar
from topology.telemetry import logline

DRIVER_PROGRAM = Path(__file__).parent.parent / "resources" / "spark" / "topo_driver.py"
SUPERVISOR_PID = "TOPO_SUPERVISOR_PID"  # the driver stops when this process is gone
STOP_TIMEOUT = 60.0


@dataclass(frozen=True)
class Submission:
    """How to run a jobs document's driver: its engine's runner, master and Spark settings,
    and the folder its relative `${file:...}` references are read from (the topology file's,
    on this machine)."""

    owner: str
    base: str  # absolute
    runner: str  # local | spark
    master: str
    spark_conf: Mapping[str, str]
    # Maven artifact sets the copy slots need beyond the connector: a login's library.
    jar_sets: tuple[str, ...] = ()
    # System properties of every JVM the copy slots run in (the driver's, the executors'):
    # a login's settings the JDK reads from no environment variable.
    java_options: tuple[str, ...] = ()


def submission(jobs: JobsDocument, base: str) -> Submission:
    topology = jobs.topology()
    engine = topology.engine
    master = engine.master
    if engine.runner == "local":
        cores = os.cpu_count() or 1
        # the most `copy_slots.sized` gives: the stated counts, one per other flow, the cores
        slots = sum(spec.tasks or 1 for spec in jobs.specs) + cores
        master = local_master(master, slots, cores)
    return Submission(
        jobs.owner,
        str(Path(base).resolve()),
        engine.runner,
        master,
        dict(engine.spark_conf),
        msk_iam.jar_sets(topology),
        kerberos.java_options(topology, os.environ),
    )


def _spark_submit() -> str:
    from pyspark.find_spark_home import _find_spark_home

    return str(Path(_find_spark_home()) / "bin" / "spark-submit")  # type: ignore[no-untyped-call]


def command(
    submission: Submission, mode: str, report: Callable[[str], None], jobs: Path
) -> list[str]:
    """The spark-submit command line. Spark settings go in a private properties file, not on
    the command line: any user of the machine can read a process's arguments, and a setting
    (an object store's key, say) may be a secret."""
    installed.require("running replication")
    jars = kafka_connector_jars(report=report)
    jars.append(topo_jar(jars))
    for jar_set in submission.jar_sets:
        jars += maven.resolve(jar_set, report=report)
    conf = {k: v for k, v in BASE_CONF.items() if k != "spark.jars"}
    conf = with_slot_plugin(with_driver_heap({**conf, **submission.spark_conf}))
    conf = with_java_options(conf, submission.java_options)
    folder = private_folder(submission.owner)
    settings = folder / SPARK_PROPERTIES
    lines = (
        f"{_escaped(key, key=True)}={_escaped(value)}\n" for key, value in sorted(conf.items())
    )
    paths.write_private(settings, "".join(lines))
    # --load-spark-defaults: a properties file would otherwise replace the machine's
    # spark-defaults.conf (SPARK_CONF_DIR) instead of adding to it, as --conf did.
    args = [
        _spark_submit(),
        "--master",
        submission.master,
        "--name",
        f"topo-{submission.owner}",
        "--properties-file",
        str(settings),
        "--load-spark-defaults",
        "--jars",
        ",".join(str(jar) for jar in jars),
    ]
    return [
        *args,
        str(DRIVER_PROGRAM),
        "--state",
        str(folder),
        "--mode",
        mode,
        "--jobs",
        str(jobs),
        "--base",
        submission.base,
    ]


SPARK_PROPERTIES = "spark.properties"
JOBS = "jobs.json"  # the jobs document the driver runs, as `topo run` got it


def write_jobs(owner: str, jobs: JobsDocument) -> Path:
    """The jobs document in the job's private folder, for the driver to read."""
    path = private_folder(owner) / JOBS
    paths.write_private(path, json.dumps(jobs.to_dict(), indent=2, sort_keys=True) + "\n")
    return path


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


class SparkDriver:
    """A driver spark-submit runs, as `topo run` supervises it (`ops.supervise.Driver`)."""

    def __init__(self, owner: str, process: "subprocess.Popen[bytes]") -> None:
        self.owner = owner
        self.process = process
        self.settings_read = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def poll(self) -> int | None:
        """The exit code once exited. The Spark settings file goes as soon as the driver
        program runs (spark-submit has read it by then), or spark-submit has exited."""
        code = self.process.poll()
        if not self.settings_read:
            recorded = jobstate.recorded_driver(self.owner)
            if code is not None or (recorded is not None and recorded.driver_pid is not None):
                _forget_settings(self.owner)
                self.settings_read = True
        return code

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM to the driver program (it stops its copies and releases its lease), the
        whole process group killed if it has not exited within `timeout`."""
        try:
            if self.process.poll() is None:
                recorded = jobstate.recorded_driver(self.owner)
                target = recorded.driver_pid if recorded and recorded.driver_pid else self.pid
                with contextlib.suppress(ProcessLookupError):
                    os.kill(target, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout)
            # Whatever of its group is left (the Python driver when spark-submit went first).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            return self.process.wait()
        finally:
            _forget_settings(self.owner)
            self.settings_read = True


def spawn(submission: Submission, jobs: JobsDocument, report: Callable[[str], None]) -> SparkDriver:
    """Start the continuous driver on `jobs` (output inherited: `topo run` logs to stdout),
    recorded in driver.json for `topo stop` on this machine."""
    args = command(submission, "continuous", report, write_jobs(submission.owner, jobs))
    try:
        # Its own process group (a Ctrl-C at `topo run`'s terminal reaches `topo run`, which
        # stops the driver cleanly), in `topo run`'s session (whose CPU is the replicator's).
        environment = {**_environment(), SUPERVISOR_PID: str(os.getpid())}
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, env=environment, process_group=0)
    except BaseException:
        _forget_settings(submission.owner)
        raise
    jobstate.write_driver(
        submission.owner,
        jobstate.Driver(
            launcher_pid=os.getpid(),  # `topo run`: stopping it stops the driver
            driver_pid=None,
            mode="continuous",
            runner=submission.runner,
            master=submission.master,
            base=submission.base,
            jobs_digest=jobs.digest,
            started_at=time.time(),
            specs={spec.flow: spec.to_dict() for spec in jobs.specs},
            submit_pid=process.pid,
        ),
    )
    return SparkDriver(submission.owner, process)


def start_supervisor(owner: str, topology_file: str, report: Callable[[str], None]) -> "Supervisor":
    """The local runner's background mode: `topo run FILE` started detached (its output in
    driver.log). The caller waits for its driver to report running on the run log
    (`ops.publish`); the supervisor restarts a crashed driver with backoff."""
    folder = private_folder(owner)
    with (folder / jobstate.LOG).open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "topology", "run", topology_file],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            # driver.log in text: its last `topo: ` line is what a failed start reports
            env={k: v for k, v in _environment().items() if k != logline.ENVIRONMENT},
            start_new_session=True,
        )
    report(
        f"starting the replication supervisor (`topo run`, pid {process.pid}); "
        f"log: {folder / jobstate.LOG}"
    )
    _DETACHED.append(process)  # referenced for this process's life: it outlives `topo apply`
    return Supervisor(process, folder)


@dataclass(frozen=True)
class Supervisor:
    """A `topo run` started in the background."""

    process: "subprocess.Popen[bytes]"
    folder: Path

    def exited(self) -> int | None:
        code = self.process.poll()
        if code is not None:
            raise TopoError(
                f"the replication supervisor exited ({code}): {_last_line(self.folder)}"
            )
        return None

    def abandon(self) -> None:
        """Stop it: its driver did not get running as asked, and nothing may be left behind
        to start it later."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(STOP_TIMEOUT + 15)  # `topo run` gives its driver STOP_TIMEOUT
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)


# Supervisors started detached: a Popen dropped while its child runs warns (ResourceWarning)
# when collected, which a long-lived caller (a test session) would see.
_DETACHED: list["subprocess.Popen[bytes]"] = []


def run_once(submission: Submission, jobs: JobsDocument, report: Callable[[str], None]) -> int:
    """Copy what the sources hold now; the driver's progress lines are relayed to `report`."""
    try:
        code = _run_once(submission, write_jobs(submission.owner, jobs), report)
    finally:
        _forget_settings(submission.owner)
    if code != 0:
        folder = jobstate.folder(submission.owner)
        report(
            f"the driver exited with {code}: {_last_line(folder)} (log: {folder / jobstate.LOG})"
        )
    return code


def _run_once(submission: Submission, jobs: Path, report: Callable[[str], None]) -> int:
    folder = private_folder(submission.owner)
    args = command(submission, "once", report, jobs)
    with (folder / jobstate.LOG).open("ab") as log:
        # Its lines are relayed as text, whatever format `topo run` logs in.
        environment = {k: v for k, v in _environment().items() if k != logline.ENVIRONMENT}
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            env=environment,
            text=True,
        )
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
    """Stop the replication supervised on this machine: SIGTERM to `topo run` (which stops its
    driver cleanly); its process group killed if it has not exited in a minute. False when none
    was running here. (`topo stop` asks through topo-runs.internal first, from any machine.)"""
    driver = jobstate.running_driver(owner)
    if driver is None:
        return False
    report(f"stopping the replication supervisor of {owner} (pid {driver.launcher_pid})")
    target = driver.launcher_pid
    with contextlib.suppress(ProcessLookupError):
        os.kill(target, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline and jobstate.alive(driver.launcher_pid):
        time.sleep(0.3)
    if jobstate.alive(driver.launcher_pid):
        report("the driver did not stop in time; killing it (its checkpoints are kept)")
        for group in (driver.submit_pid, driver.launcher_pid):
            with contextlib.suppress(ProcessLookupError, PermissionError, TypeError):
                os.killpg(group, signal.SIGKILL)  # type: ignore[arg-type]
    (jobstate.folder(owner) / jobstate.DRIVER).unlink(missing_ok=True)
    return True


def _last_line(folder: Path) -> str:
    try:
        lines = (folder / jobstate.LOG).read_text(errors="replace").splitlines()
    except OSError:
        return "no log"
    useful = [line for line in lines if line.startswith("topo: ") or "Error:" in line]
    return (useful or lines or ["no output"])[-1][:400]
