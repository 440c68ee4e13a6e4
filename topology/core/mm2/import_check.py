"""Problems topo finds in an imported topology, shown where the user can fix them: at the line
of mm2.properties the offending part came from, not in a file that was never written.

`topo import mm2` checks its result with the same analysis as `topo validate`. Written to
stdout, that topology has no file a user could open at a line; the importer's `origins` say
which property each part of it came from, so each diagnostic moves there and names the part of
the topology it is about.
"""

from collections.abc import Iterable, Mapping

from topology.core.diagnostics import Diagnostic, Severity, Span
from topology.core.mm2.properties import Property
from topology.core.source import Document, Path


def in_properties(
    diagnostics: Iterable[Diagnostic],
    imported: Document,
    origins: Mapping[Path, Property],
    properties_file: str,
) -> list[Diagnostic]:
    paths = _paths_by_span(imported)
    moved = []
    for diagnostic in diagnostics:
        path = paths.get(diagnostic.span, ())
        origin = _origin(path, origins)
        span = Span(properties_file, origin.line, origin.column) if origin else diagnostic.span
        where = f" (imported topology, {_dotted(path)})" if path else " (imported topology)"
        moved.append(
            Diagnostic(
                diagnostic.severity,
                diagnostic.code,
                diagnostic.message + where,
                span,
                secret=diagnostic.secret,
            )
        )
    return moved


def subjects(diagnostics: Iterable[Diagnostic], imported: Document) -> str:
    """What the errors are about, for the import's closing line: `cluster east`, `flows[0]`
    (`the clusters and flows above` when they are many), or `the topology` as a whole."""
    paths = _paths_by_span(imported)
    named: dict[str, None] = {}
    for diagnostic in diagnostics:
        if diagnostic.severity is not Severity.ERROR:
            continue
        path = paths.get(diagnostic.span, ())
        if len(path) >= 2 and path[0] == "clusters":
            named[f"cluster {path[1]}"] = None
        elif len(path) >= 2 and path[0] == "flows":
            named[f"flows[{path[1]}]"] = None
        else:
            named["the topology"] = None
    if len(named) > 3:
        return "the clusters and flows they name"
    return " and ".join(named) or "the topology"


def _paths_by_span(document: Document) -> dict[Span, Path]:
    """Each position in the document, and the deepest path that starts there."""
    paths: dict[Span, Path] = {}
    for path, span in [*document.keys.items(), *document.values.items()]:
        if len(path) >= len(paths.get(span, ())):
            paths[span] = path
    return paths


def _origin(path: Path, origins: Mapping[Path, Property]) -> Property | None:
    """The property of `path`, or of the closest part of the topology above it."""
    probe = tuple(path)
    while probe:
        if probe in origins:
            return origins[probe]
        probe = probe[:-1]
    return origins.get(())


def _dotted(path: Path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
