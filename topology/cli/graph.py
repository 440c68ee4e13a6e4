"""`topo graph FILE`: the replication graph as Mermaid, Graphviz DOT or JSON."""

from enum import StrEnum
from typing import Annotated

import typer


class Format(StrEnum):
    MERMAID = "mermaid"
    DOT = "dot"
    JSON = "json"


def graph(
    file: Annotated[str, typer.Argument(help="Topology file (- for standard input).")],
    output: Annotated[Format, typer.Option("--format", help="mermaid, dot or json.")] = (
        Format.MERMAID
    ),
) -> None:
    """Draw the clusters and flows; json also lists the remote topics each cluster receives."""
    from topology.cli.files import read_text
    from topology.cli.report import show
    from topology.core.analysis import analyse
    from topology.core.render import graph_formats as render

    analysis = analyse(read_text(file), file)
    show(analysis.diagnostics, analysis.document)
    if analysis.graph is None or analysis.reach is None:
        raise typer.Exit(1)
    data = render.graph_dict(analysis.graph, analysis.reach)
    writers = {
        Format.MERMAID: render.as_mermaid,
        Format.DOT: render.as_dot,
        Format.JSON: render.as_json,
    }
    typer.echo(writers[output](data), nl=False)
    if not analysis.ok:
        raise typer.Exit(1)
