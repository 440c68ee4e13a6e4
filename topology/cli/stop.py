"""`topo stop FILE`: stop the topology's replication jobs cleanly; their checkpoints are kept,
so the next `topo apply` resumes exactly where they stopped."""

from typing import Annotated

import typer


def stop(file: Annotated[str, typer.Argument(help="The topology file.")]) -> None:
    """Stop the replication jobs `topo apply` started for this topology."""
    from topology.cli import live
    from topology.spark import launch

    owner = live.load(file).topology.name

    def progress(line: str) -> None:
        typer.echo(line, err=True)

    if launch.stop(owner, report=progress):
        typer.echo(f"Stopped the replication of {owner}; `topo apply {file}` resumes it.")
    else:
        typer.echo(f"No replication of {owner} is running.")
