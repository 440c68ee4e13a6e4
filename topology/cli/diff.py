"""`topo diff BASE HEAD`: what a change to a topology file does, for pull-request review."""

from enum import StrEnum
from typing import Annotated

import typer

EXIT_SAME = 0
EXIT_ERROR = 1
EXIT_DIFFERENT = 2


class Format(StrEnum):
    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"


def diff(
    base: Annotated[str, typer.Argument(help="The topology before the change.")],
    head: Annotated[str, typer.Argument(help="The topology after the change.")],
    output: Annotated[Format, typer.Option("--format", help="text, markdown or json.")] = (
        Format.TEXT
    ),
) -> None:
    """Compare two topologies offline. Exit 0: same; 2: different; 1: an error (as in head)."""
    from topology.cli.files import read_text
    from topology.cli.report import show
    from topology.core.analysis import analyse
    from topology.core.diagnostics import Severity
    from topology.core.render import diff_report as render
    from topology.core.render import graph_formats as render_graph
    from topology.core.topology_diff import diff as compare

    analyses = [analyse(read_text(file), file) for file in (base, head)]
    unreadable = [a for a in analyses if a.graph is None]
    for analysis in unreadable:
        show(analysis.diagnostics, analysis.document)
    if unreadable:
        raise typer.Exit(EXIT_ERROR)
    before, after = analyses
    result = compare(before, after)
    data = result.to_dict()
    if output is Format.JSON:
        typer.echo(render.as_json(data))
    elif output is Format.MARKDOWN:
        assert after.graph is not None and after.reach is not None
        picture = render_graph.as_mermaid(render_graph.graph_dict(after.graph, after.reach))
        typer.echo(render.as_markdown(data, picture), nl=False)
    else:
        typer.echo(render.as_text(data), nl=False)
    if not after.ok:
        # The diff lists head's new diagnostics without a place; the reason for exit 1 goes
        # to stderr located, as `topo validate` prints it.
        show([d for d in after.diagnostics if d.severity is Severity.ERROR], after.document)
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_DIFFERENT if result.changed else EXIT_SAME)
