"""`topo stop FILE`: stop the topology's replication cleanly, wherever it runs; its checkpoints
are kept, so the next `topo apply` resumes exactly where it stopped.

The stop request goes to topo-runs.internal on the home cluster, where the running driver (on
any machine) and its `topo run` look for one every two seconds; this command then waits until
the driver says it stopped. A supervisor on this machine is also stopped directly.
"""

import os
import socket
import time
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from topology.kafka.runlog import RunLog

STOP_WAIT = 90.0  # seconds for the driver to stop its queries and say so


def stop(file: Annotated[str, typer.Argument(help="The topology file.")]) -> None:
    """Stop the topology's replication, on whichever machine it runs."""
    from topology.cli import live
    from topology.kafka.runlog import RunLog
    from topology.ops.runs import stop_request
    from topology.spark import launch

    loaded = live.load(file)
    topology = loaded.topology
    owner, home = topology.name, topology.home

    def progress(line: str) -> None:
        typer.echo(line, err=True)

    book = live.run_book(loaded) if home is not None else None
    running_elsewhere = book is not None and live.lease_live(book, owner)
    if book is not None and running_elsewhere:
        assert home is not None
        configs = live.client_configs(loaded)
        with RunLog(configs[home], owner, cluster=home) as log:
            log.write(
                "stop", stop_request("topo stop", socket.gethostname(), os.getpid(), time.time())
            )
            lease = log.read().lease(owner)
            progress(f"asked the driver ({lease.holder if lease else '?'}) to stop, through "
                     f"topo-runs.internal on {home}")  # fmt: skip
            stopped = _wait_for_release(log, owner)
        local = launch.stop(owner, report=progress)  # a supervisor here exits on its own
        if not stopped and not local:
            raise typer.Exit(_not_stopped(owner))
        typer.echo(f"Stopped the replication of {owner}; `topo apply {file}` resumes it.")
    elif launch.stop(owner, report=progress):
        typer.echo(f"Stopped the replication of {owner}; `topo apply {file}` resumes it.")
    else:
        typer.echo(f"No replication of {owner} is running.")


def _wait_for_release(log: "RunLog", owner: str) -> bool:
    """Until the lease is released (the driver stopped) or STOP_WAIT passes."""
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        lease = log.read().lease(owner)
        if lease is None or lease.released:
            return True
        time.sleep(1.0)
    return False


def _not_stopped(owner: str) -> int:
    typer.echo(
        f"The driver of {owner} did not release its lease within {STOP_WAIT:.0f}s; it may be "
        "unable to reach the home cluster. The stop request stays: it stops as soon as it "
        "reads it.",
        err=True,
    )
    return 1
