"""Diagnostics as GitHub workflow commands (`::error file=…,line=…::message`), so each problem
is also marked on the line it is about in the pull request's "Files changed" view."""

from collections.abc import Iterable

from topology.core.diagnostics import Severity
from topology.core.render.diagnostics import listed
from topology.review.findings import FileReview


def workflow_commands(reviews: Iterable[FileReview]) -> list[str]:
    commands = []
    for review in reviews:
        for diagnostic in listed(review.diagnostics).shown:  # the comment counts the rest
            level = "error" if diagnostic.severity is Severity.ERROR else "warning"
            properties = ",".join(
                [
                    f"file={_property(review.path)}",
                    f"line={diagnostic.span.line}",
                    f"col={diagnostic.span.column}",
                    f"title={_property(f'topo {diagnostic.code}')}",
                ]
            )
            commands.append(f"::{level} {properties}::{_data(diagnostic.message)}")
    return commands


# The escaping GitHub's runner expects in workflow commands (actions/toolkit, command.ts).
def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
