"""`topo run FILE`: run a topology's replication in the foreground, supervised.

The unit systemd, a container or Kubernetes supervises (docs/service.md). It reads the jobs
`topo apply` published for the topology in `topo-runs.internal` on its home cluster, starts the
replication driver on them (spark-submit, the topology's runner and master) and supervises it
(`ops.supervise`): a driver that dies is restarted with backoff, newly published jobs restart
it, a stop request (`topo stop`, from any machine) or SIGTERM stops it cleanly. Logs go to
stdout, one `topo: ` line per event; the driver's own lines follow them.

Exit codes: 0 after a clean stop; 1 when the topology cannot be loaded; 3 when the driver
refuses its jobs (another format); never while the driver can be restarted.
"""

import signal
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from topology.cli.live import Loaded
    from topology.kafka.runlog import RunLog
    from topology.ops.supervise import Wanted
    from topology.spark.launch import SparkDriver

LEASE_MARGIN_S = 5.0  # beyond the lease's TTL, for clocks that disagree between machines


def run(file: Annotated[str, typer.Argument(help="The topology file.")]) -> None:
    """Run the replication in the foreground: supervise the driver on the published jobs."""
    from topology.cli import live
    from topology.errors import TopoError
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
        code = supervise(
            wanted=runs.wanted,
            start=runs.start,
            stopping=lambda: bool(stopping),
            report=say,
            stop_timeout=60.0,
        )
    say(f"exiting ({code})")
    raise typer.Exit(code)


def say(line: str) -> None:
    typer.echo(f"topo: {line}")


class _Runs:
    """What `topo run` reads from topo-runs.internal, and how it starts a driver."""

    def __init__(self, loaded: "Loaded", log: "RunLog") -> None:
        self.loaded = loaded
        self.log = log
        self.driver: SparkDriver | None = None

    def wanted(self) -> "Wanted":
        from topology.jobs import JobsFormatError, read_document
        from topology.ops.supervise import Wanted

        owner = self.loaded.topology.name
        book = self.log.read()
        entry = book.jobs(owner)
        if entry is None:
            return Wanted(None, None)
        stop = None
        if book.stop_applies(owner):
            request = book.stop(owner)
            value = request.value if request is not None else {}
            stop = f"by {value.get('by', '?')} at {_when(value.get('requested_at'))}"
        try:
            jobs: Any = read_document(entry.value)
        except JobsFormatError as problem:
            return Wanted(entry.value, entry.offset, stop, f"the published jobs: {problem}")
        unusable = None
        if jobs.topology_sha256 != self.loaded.sha256:
            unusable = (
                f"the jobs published at {_when(jobs.published_at)} are for another version of "
                f"{self.loaded.file} (sha256 {jobs.topology_sha256[:12]}, this file's is "
                f"{self.loaded.sha256[:12]}): deploy the applied file here, or apply this one"
            )
        elif not jobs.specs:
            unusable = "the published jobs have no flows"
        elif not self._mine_running():
            unusable = self._held_elsewhere(book)
        return Wanted(jobs, entry.offset, stop, unusable)

    def _mine_running(self) -> bool:
        return self.driver is not None and self.driver.process.poll() is None

    def _held_elsewhere(self, book: Any) -> str | None:
        """Another driver holds the lease and renewed it lately: starting one would only wait."""
        from topology.runstate import TTL_MS

        lease = book.lease(self.loaded.topology.name)
        if lease is None or lease.released:
            return None
        if time.time() - lease.renewed_at_ms / 1000 > TTL_MS / 1000 + LEASE_MARGIN_S:
            return None
        return f"another driver ({lease.holder}) holds this topology's lease and renews it"

    def start(self, jobs: Any) -> "SparkDriver":
        from topology.cli import live
        from topology.spark import launch

        self.driver = launch.spawn(live.submission(self.loaded), jobs, report=say)
        return self.driver


def _when(at: Any) -> str:
    if not isinstance(at, int | float):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(at))
