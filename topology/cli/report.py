"""Printing diagnostics to stderr, the one way every command does it."""

from collections.abc import Iterable

import typer

from topology.core.diagnostics import Diagnostic
from topology.core.render.diagnostics import as_text
from topology.core.source import Document


def show(diagnostics: Iterable[Diagnostic], document: Document) -> None:
    """Each diagnostic with its source line, on stderr (stdout stays for the command's output)."""
    for diagnostic in diagnostics:
        typer.echo(as_text(diagnostic, document), err=True)
