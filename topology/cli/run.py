"""`topo run FILE`: run a topology's replication in the foreground, supervised.

The unit systemd, a container or Kubernetes supervises (docs/service.md). It reads the jobs
`topo apply` published for the topology in `topo-runs.internal` on its home cluster, checks
that they are the jobs its file makes (compared as the driver runs them, so an edit that
changes none of them, a comment, changes nothing; whoever may write the log cannot make it
run jobs of their own), starts the replication driver on them (the jobs document is all the
driver reads) (spark-submit, the topology's runner and master) and supervises it
(`ops.supervise`): a driver that dies is seen at once, its lease released and it is restarted
(at once, then with backoff while it keeps dying), newly published jobs restart it, a stop
request (`topo stop`, from any machine) or SIGTERM stops it cleanly. Logs go to stdout, one
`topo: ` line per event; the driver's own lines follow them.

Exit codes: 0 after a clean stop; 1 when the topology cannot be loaded; 3 when the driver
refuses its jobs (another format, a digest that does not match its content); never while the
driver can be restarted.
"""

import contextlib
import dataclasses
import os
import select
import signal
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from topology.cli.live import Loaded
    from topology.kafka.runlog import RunLog
    from topology.ops.supervise import Wanted
    from topology.spark.launch import SparkDriver


def run(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    log_format: Annotated[
        str,
        typer.Option(
            "--log-format",
            envvar="TOPO_LOG_FORMAT",
            help="text, or json: one JSON object per line on stdout (time, level, flow, event, "
            "message) from topo run and its driver; Spark's own log stays on stderr.",
        ),
    ] = "text",
) -> None:
    """Run the replication in the foreground: supervise the driver on the published jobs."""
    from topology.core.errors import TopoError
    from topology.telemetry import logline

    if log_format not in logline.FORMATS:
        raise TopoError(f"--log-format {log_format!r} is not one of: {', '.join(logline.FORMATS)}")
    os.environ[logline.ENVIRONMENT] = log_format  # the driver it starts logs alike
    from topology.cli import live
    from topology.kafka.runlog import RunLog
    from topology.ops.supervise import supervise
    from topology.spark import installed

    loaded = live.load(file)
    topology = loaded.topology
    if topology.engine.runner == "none":
        raise TopoError(f"{file}: the engine runner is none, so there is no replication to run")
    home = topology.home
    if home is None:
        raise TopoError(f"{file} has no flows: there is no replication to run")
    installed.require("topo run")
    configs = live.client_configs(loaded)
    stopping: list[bool] = []

    def on_signal(signum: int, _frame: object) -> None:
        say(f"{signal.Signals(signum).name} received; stopping")
        stopping.append(True)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    say(f"supervising the replication of {topology.name}; its state: topo-runs.internal on {home}")
    with RunLog(configs[home], topology.name, cluster=home) as log:
        runs = _Runs(loaded, log)
        try:
            code = supervise(
                wanted=runs.wanted,
                start=runs.start,
                stopping=lambda: bool(stopping),
                report=say,
                reaped=runs.reaped,
                sleep=runs.nap,
                stop_timeout=60.0,
            )
        finally:  # whatever ends the loop, no driver is left running without its supervisor
            if runs.driver is not None and runs.driver.process.poll() is None:
                runs.driver.stop(60.0)
    say(f"exiting ({code})")
    _deaf_to_late_stops()
    raise typer.Exit(code)


def _deaf_to_late_stops() -> None:
    """Ignore SIGTERM and SIGINT from here on: the run is over, and as Python exits it puts
    back the default action of every signal it handled, so a `topo stop` arriving then (it
    signals after asking through topo-runs.internal, which this run already obeyed) would kill
    the process and turn its exit code into -15. An ignored signal is left ignored."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def say(line: str) -> None:
    from topology.telemetry import logline

    fmt = os.environ.get(logline.ENVIRONMENT, "text")
    typer.echo(logline.line(line, fmt, time.time(), event="supervisor"))


TRUSTED = "trusted-jobs.json"  # in the topology's state folder on this machine


class _Runs:
    """What `topo run` reads from topo-runs.internal, and how it starts a driver."""

    def __init__(self, loaded: "Loaded", log: "RunLog") -> None:
        from topology.core.jobs import job_views
        from topology.host import jobstate

        self.loaded = loaded
        self.log = log
        self.driver: SparkDriver | None = None
        self.views = job_views(loaded.topology)  # what the file makes (as last read well)
        # The digests of the jobs documents this machine found to be its file's: run again
        # after a restart (a kill, a reboot) even when the file was edited since, not applied.
        self.trusted_file = jobstate.folder(loaded.topology.name) / TRUSTED
        kept = jobstate.read_json(self.trusted_file)
        self.trusted: set[str] = (
            {d for d in kept if isinstance(d, str)} if isinstance(kept, list) else set()
        )
        self.seen: tuple[int, int] | None = None  # the file's mtime and size when read

    def wanted(self) -> "Wanted":
        from topology.host import jobstate
        from topology.ops import runs

        book = self.log.read()
        owner = self.loaded.topology.name
        mine = self._mine_running()
        found = runs.wanted(
            book, owner, mine, time.time(), self._made(), self.loaded.file, self.trusted
        )
        if mine:
            recorded = jobstate.recorded_driver(owner)
            pid = recorded.driver_pid if recorded is not None else None
            found = dataclasses.replace(found, running=runs.runs_here(book, owner, pid))
        digest = getattr(found.jobs, "digest", None)
        if found.unusable is None and isinstance(digest, str) and digest not in self.trusted:
            self.trusted.add(digest)  # its file made them: trusted from now on, here
            jobstate.write_json(self.trusted_file, sorted(self.trusted))
        return found

    def _made(self) -> dict[str, dict[str, Any]]:
        """The jobs the file here makes now (`jobs.job_views`), read again when it changed
        (a deployment of the applied revision is picked up without a restart). When it
        cannot be read or has errors, the published jobs are checked against the file as it
        last read well."""
        from topology.core.analysis import analyse
        from topology.core.errors import TopoError
        from topology.core.jobs import job_views

        file = Path(self.loaded.file)
        try:
            facts = file.stat()
        except OSError:
            return self.views
        seen = (facts.st_mtime_ns, facts.st_size)
        if seen == self.seen:
            return self.views
        self.seen = seen
        try:
            analysis = analyse(file.read_bytes().decode("utf-8"), str(file))
        except (OSError, UnicodeDecodeError, TopoError):
            return self.views
        made = analysis.topology
        if analysis.ok and made is not None and made.name == self.loaded.topology.name:
            self.views = job_views(made)
        return self.views

    def _mine_running(self) -> bool:
        return self.driver is not None and self.driver.process.poll() is None

    def start(self, jobs: Any) -> "SparkDriver":
        from topology.spark import launch

        base = str(Path(self.loaded.file).parent)
        self.driver = launch.spawn(launch.submission(jobs, base), jobs, report=say)
        return self.driver

    def nap(self, seconds: float) -> None:
        """The supervisor's pause between looks, ended early when the driver exits, so that a
        crash is seen at once rather than at the next look."""
        driver = self.driver
        if driver is None or driver.process.poll() is not None:
            time.sleep(seconds)
            return
        try:
            exited = os.pidfd_open(driver.pid)  # readable once the process has exited
        except OSError:
            time.sleep(seconds)
            return
        try:
            select.select([exited], [], [], seconds)
        finally:
            os.close(exited)

    def reaped(self) -> str | None:
        """The driver just reaped: whatever is left of its process group (its program, when
        spark-submit went first) is killed, and the lease its program held is released on its
        behalf, so that its successor takes over at once instead of after the lease's 15 s.
        Only a lease whose holder is that program on this machine is released
        (`lease.release_for_gone`)."""
        from topology.core.runstate import LEASE
        from topology.host import jobstate
        from topology.ops.lease import release_for_gone

        if self.driver is None:
            return None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.driver.pid, signal.SIGKILL)  # its own group: nothing else is in it
        owner = self.loaded.topology.name
        recorded = jobstate.recorded_driver(owner)
        pid = recorded.driver_pid if recorded is not None else None
        if pid is None:
            return None  # it died before its program ran: it never held the lease
        deadline = time.monotonic() + 2.0
        while jobstate.alive(pid):
            if time.monotonic() > deadline:
                return f"the dead driver's program (pid {pid}) still runs; its lease expires in 15s"
            time.sleep(0.05)
        lease = self.log.read().lease(owner)
        record = release_for_gone(lease, socket.gethostname(), pid, at=time.time())
        if record is None:
            return None
        self.log.write(LEASE, record)
        return f"released the lease of the dead driver (pid {pid}); its successor takes it at once"
