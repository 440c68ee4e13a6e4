"""Printing diagnostics to stderr, the one way every command does it."""

from collections.abc import Iterable, Mapping

import typer

from topology.core.diagnostics import Diagnostic
from topology.core.render.diagnostics import as_text, listed
from topology.core.source import Document


def show(diagnostics: Iterable[Diagnostic], document: Document | Mapping[str, Document]) -> None:
    """Each diagnostic with its source line, on stderr (stdout stays for the command's output):
    the first ones of each severity, then one line counting those left out. `document` is the
    file the diagnostics are in, or each file by name when they are in several."""
    chosen = listed(diagnostics)
    for diagnostic in chosen.shown:
        file = diagnostic.span.file
        shown_in = (
            document
            if isinstance(document, Document)
            else document.get(file, Document(file, "", None))
        )
        typer.echo(as_text(diagnostic, shown_in), err=True)
    more = chosen.left_out()
    if more is not None:
        typer.echo(more, err=True)
