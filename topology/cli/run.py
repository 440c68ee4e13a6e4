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
        from topology.ops import runs

        loaded = self.loaded
        return runs.wanted(
            self.log.read(),
            loaded.topology.name,
            loaded.sha256,
            loaded.file,
            self._mine_running(),
            time.time(),
        )

    def _mine_running(self) -> bool:
        return self.driver is not None and self.driver.process.poll() is None

    def start(self, jobs: Any) -> "SparkDriver":
        from topology.cli import live
        from topology.spark import launch

        self.driver = launch.spawn(live.submission(self.loaded), jobs, report=say)
        return self.driver
