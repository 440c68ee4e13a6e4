"""`topo export mm2 FILE.yaml [-o OUT.properties]`: a topology as a MirrorMaker 2 config."""

from typing import Annotated

import typer

export_app = typer.Typer(
    help="Write a topology as another tool's replication config.", no_args_is_help=True
)
app = export_app


@export_app.command("mm2")
def mm2(
    file: Annotated[str, typer.Argument(help="Topology file (- for standard input).")],
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", help="Write mm2.properties here instead of stdout."),
    ] = None,
) -> None:
    """Export a valid topology as mm2.properties for MM2's dedicated mode.

    What MM2 cannot express is warned about on stderr and commented in the output. Exit 1 when
    the topology has errors, or when MM2 could not hold it faithfully (two settings writing one
    property differently, a name with a line break): nothing is written.
    """
    from topology.analysis import analyse
    from topology.cli.files import read_text, write_text
    from topology.cli.report import show
    from topology.mm2.exporter import export
    from topology.render import diagnostics as render

    analysis = analyse(read_text(file), file)
    show(analysis.diagnostics, analysis.document)
    if not analysis.ok or analysis.topology is None:
        typer.echo(f"{render.summary(file, analysis.diagnostics)}; nothing exported", err=True)
        raise typer.Exit(1)
    result = export(analysis.topology, file, analysis.document)
    show(result.diagnostics, analysis.document)
    if not result.ok:
        typer.echo(f"{render.summary(file, result.diagnostics)}; nothing exported", err=True)
        raise typer.Exit(1)
    if output is None:
        typer.echo(result.text, nl=False)
    else:
        write_text(output, result.text)
    if result.env_vars:
        typer.echo(
            "MM2 reads these environment variables (EnvVarConfigProvider): "
            + ", ".join(result.env_vars),
            err=True,
        )
    warnings, flows = len(result.diagnostics), len(analysis.topology.edges())
    typer.echo(
        f"{file}: exported {flows} MM2 flow{'' if flows == 1 else 's'}"
        + (f" into {output}" if output else "")
        + f" ({warnings} warning{'' if warnings == 1 else 's'} about what MM2 cannot express)",
        err=True,
    )
