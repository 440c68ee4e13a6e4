"""The `topo` command: typer apps composed here, one command (group) per module.

This package is the composition root: it is the only place that imports typer, and it imports
the rest of topo lazily inside commands, so `topo --help` never loads Spark or the Kafka client.
"""

import sys
import traceback
from typing import NoReturn

import typer

from topology import __version__
from topology.cli import (
    apply,
    dashboard,
    diff,
    export_mm2,
    failover,
    graph,
    import_mm2,
    lab,
    plan,
    reset,
    run,
    status,
    stop,
    validate,
    verify,
)
from topology.cli import (
    export_alerts as export_alerts,  # its command joins export_mm2's `export` group
)
from topology.core.errors import TopoError

app = typer.Typer(
    name="topo",
    help="Topology-as-code for Kafka cross-cluster replication, with plan/apply.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(lab.app, name="lab")
app.add_typer(import_mm2.app, name="import")
app.add_typer(export_mm2.app, name="export")
app.command()(validate.validate)
app.command()(graph.graph)
app.command()(diff.diff)
app.command()(plan.plan)
app.command()(apply.apply)
app.command()(status.status)
app.command()(dashboard.dashboard)
app.command()(stop.stop)
app.command()(run.run)
app.command()(failover.failover)
app.command()(failover.offsets)
app.command()(verify.verify)
app.command()(reset.reset)

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 3
EXIT_INTERRUPTED = 130


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"topo {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Show the version."
    ),
) -> None:
    """Topology-as-code for Kafka cross-cluster replication, with plan/apply."""


def main() -> None:
    """Entry point: a user's error is one line on stderr and exit 1; --debug adds the trace."""
    debug = "--debug" in sys.argv[1:]
    try:
        app()
    except TopoError as problem:
        if debug:
            traceback.print_exc()
        typer.echo(f"error: {problem}", err=True)
        sys.exit(EXIT_USER_ERROR)
    except ModuleNotFoundError as missing:
        if (missing.name or "").split(".")[0] != "pyspark":
            _internal_error(missing, debug)
        # A path to Spark that no command checked first: still one line naming the fix.
        from topology.spark.installed import INSTALL

        if debug:
            traceback.print_exc()
        typer.echo(f"error: this needs topo's replication engine (pyspark): {INSTALL}", err=True)
        sys.exit(EXIT_USER_ERROR)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as bug:
        _internal_error(bug, debug)


def _internal_error(bug: Exception, debug: bool) -> NoReturn:
    """A defect in topo: say so plainly, keep the detail for --debug."""
    if debug:
        traceback.print_exc()
    typer.echo(
        f"internal error: {type(bug).__name__}: {bug} (run with --debug for the traceback)",
        err=True,
    )
    sys.exit(EXIT_INTERNAL_ERROR)
