"""`topo import mm2 FILE.properties [-o OUT.yaml]`: a MirrorMaker 2 config as a topology file."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from topology.core.mm2.import_context import EnvVar

import_app = typer.Typer(
    help="Turn another tool's replication config into a topology file.", no_args_is_help=True
)
app = import_app


@import_app.command("mm2")
def mm2(
    file: Annotated[
        str, typer.Argument(help="MM2 dedicated-mode config, mm2.properties (- for stdin).")
    ],
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", help="Write the topology here instead of stdout."),
    ] = None,
) -> None:
    """Import an MM2 config: every property is mapped or warned about; secrets become env vars.

    Exit 0 when imported (warnings included), 1 when the config has errors.
    """
    from topology.cli.files import read_text, write_text
    from topology.cli.report import show
    from topology.core.analysis import analyse
    from topology.core.mm2 import import_check, yaml_out
    from topology.core.mm2.import_context import folded
    from topology.core.mm2.import_header import header
    from topology.core.mm2.importer import import_properties
    from topology.core.render import diagnostics as render
    from topology.core.source import Document

    result = import_properties(read_text(file), file)
    shown = Document(file, result.shown_text, None)  # secrets masked: lines are printed
    show(folded(result.diagnostics), shown)
    if result.data is None:
        typer.echo(f"{render.summary(file, result.diagnostics)}; nothing imported", err=True)
        raise typer.Exit(1)
    text = yaml_out.render(result.data, header(result, file))
    # The import must give a topology topo accepts; say so plainly if it does not. Written
    # to a file, its problems are shown there; on stdout, at the properties they came from.
    check = analyse(text, output or "<imported topology>")
    if output is None:
        typer.echo(text, nl=False)
        moved = import_check.in_properties(check.diagnostics, check.document, result.origins, file)
        show(folded(moved), shown)
    else:
        write_text(output, text)
        show(folded(check.diagnostics), check.document)
    _tell_env_vars(result.env_vars)
    flows = len(result.data["flows"])
    typer.echo(
        f"{file}: imported {len(result.data['clusters'])} clusters and {flows} "
        f"flow{'' if flows == 1 else 's'}"
        + (f" into {output}" if output else "")
        + f" ({_count(result.diagnostics, 'warning')})",
        err=True,
    )
    if not check.ok:
        subjects = import_check.subjects(check.diagnostics, check.document)
        typer.echo(
            "error: the imported topology does not pass topo validate (see above); MM2 "
            f"accepted this config, topo does not: fix {subjects} as the errors say",
            err=True,
        )
        raise typer.Exit(1)


def _tell_env_vars(variables: Sequence["EnvVar"]) -> None:
    if not variables:
        return
    typer.echo(
        "Set these environment variables where topo runs (the secrets are not in the file):",
        err=True,
    )
    from topology.core.diagnostics import one_line

    # Names and purposes quote the properties' names: control characters (a terminal's escape,
    # a NUL) are written as escapes, as the warnings write them.
    rows = [(one_line(v.name), one_line(v.purpose)) for v in variables]
    width = max(len(name) for name, _ in rows)
    for name, purpose in rows:
        typer.echo(f"  {name.ljust(width)}  {purpose}", err=True)


def _count(items: Sequence[object], word: str) -> str:
    return f"{len(items)} {word}{'' if len(items) == 1 else 's'}"
