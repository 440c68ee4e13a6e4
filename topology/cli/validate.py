"""`topo validate FILE...`: check topology files offline; exit 0 when valid, 1 when not."""

import json
from enum import StrEnum
from typing import Annotated

import typer


class Format(StrEnum):
    TEXT = "text"
    JSON = "json"


def validate(
    files: Annotated[list[str], typer.Argument(help="Topology files (- for standard input).")],
    output: Annotated[
        Format, typer.Option("--format", help="text (diagnostics on stderr) or json (stdout).")
    ] = Format.TEXT,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on warnings too.")] = False,
) -> None:
    """Check files against the schema, Kafka's rules and the graph rules; report every problem."""
    from topology.cli.files import read_text
    from topology.cli.report import show
    from topology.core.analysis import analyse
    from topology.core.diagnostics import Severity
    from topology.core.render import diagnostics as render

    failed = False
    reports = []
    for file in files:
        analysis = analyse(read_text(file), file)
        failing = [d for d in analysis.diagnostics if d.severity is Severity.ERROR or strict]
        failed = failed or bool(failing)
        if output is Format.JSON:
            reports.append(render.as_json(analysis.document, analysis.diagnostics))
            continue
        show(analysis.diagnostics, analysis.document)
        typer.echo(render.summary(file, analysis.diagnostics))
    if output is Format.JSON:
        typer.echo(json.dumps({"valid": not failed, "files": reports}, indent=2))
    if failed:
        raise typer.Exit(1)
