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

from topology.core.errors import TopoError

if TYPE_CHECKING:
    from topology.kafka.runlog import RunLog

STOP_WAIT = 90.0  # seconds for the driver to stop its copies and say so


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

    book, unreadable = None, None
    if home is not None:
        try:
            book = live.run_book(loaded)
        except TopoError as problem:
            unreadable = problem
            progress(
                f"cannot read topo-runs.internal on {home} ({problem}); stopping only what "
                "runs on this machine"
            )
    requested, stopped = False, True
    live_lease = book is not None and live.lease_live(book, owner)
    standing = book is not None and book.jobs(owner) is not None and not book.stop_applies(owner)
    if book is not None and (live_lease or standing):
        assert home is not None
        configs = live.client_configs(loaded)
        with RunLog(configs[home], owner, cluster=home) as log:
            log.write(
                "stop", stop_request("topo stop", socket.gethostname(), os.getpid(), time.time())
            )
            requested = True
            if live_lease:
                lease = book.lease(owner)
                progress(
                    f"asked the driver ({lease.holder if lease else '?'}) to stop, through "
                    f"topo-runs.internal on {home}"
                )
                stopped = _wait_for_release(log, owner)
            else:
                progress(
                    f"no driver holds the lease now; the stop request stays in "
                    f"topo-runs.internal on {home}, so none starts again until the next "
                    "`topo apply`"
                )
    local = launch.stop(owner, report=progress)  # a supervisor here exits on its own
    if not (requested or local):
        if unreadable is not None:
            raise TopoError(
                f"could not ask the replication of {owner} to stop: {unreadable}; nothing runs "
                "on this machine"
            )
        typer.echo(f"No replication of {owner} is running.")
        return
    if not stopped and not local:
        raise typer.Exit(_not_stopped(owner))
    typer.echo(f"Stopped the replication of {owner}; `topo apply {file}` resumes it.")


def _wait_for_release(log: "RunLog", owner: str) -> bool:
    """Until the lease is released (the driver stopped) or STOP_WAIT passes. A release that a
    newer `topo apply` caused (its jobs restart the driver) is no stop: said, exit 1."""
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        book = log.read()
        lease = book.lease(owner)
        if lease is None or lease.released:
            if not book.stop_applies(owner):
                typer.echo(
                    f"A `topo apply` published new jobs for {owner} after this stop request: "
                    "they run. Stop again to stop them.",
                    err=True,
                )
                raise typer.Exit(1)
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
