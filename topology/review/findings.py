"""What a review finds in one changed topology file: validation, diff and graph, as values.

Pure: the edge hands over the texts (the base branch's version and the pull request's), this
module runs the same front end as `topo validate`, `topo diff` and `topo graph` on them.
"""

from dataclasses import dataclass, replace

from topology.core.analysis import Analysis, analyse
from topology.core.diagnostics import Diagnostic, Severity
from topology.core.render import diagnostics as render_diagnostics
from topology.core.render import diff_report as render_diff
from topology.core.render import graph_formats as render_graph
from topology.core.topology_diff import diff
from topology.review import connections
from topology.review.selection import Change


@dataclass(frozen=True)
class PlanOutcome:
    """`topo plan --format markdown` for the pull request's version, or why it did not work."""

    markdown: str | None = None
    error: str | None = None
    skipped: str | None = None  # why it was not run (not a failure: nothing was asked)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class FileReview:
    path: str
    change: Change
    diagnostics: tuple[Diagnostic, ...] = ()
    diagnostics_text: tuple[str, ...] = ()  # each as `topo validate` prints it, line and caret
    diff_markdown: str | None = None
    diff_note: str | None = None  # why there is no diff, when there is none
    mermaid: str | None = None
    plan: PlanOutcome | None = None
    # Clusters whose connection settings differ from the base branch's (`name (what)`): the
    # plan connects to them only when a maintainer allows it.
    connection_changes: tuple[str, ...] = ()

    @property
    def errors(self) -> int:
        return sum(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return len(self.diagnostics) - self.errors

    @property
    def valid(self) -> bool:
        return self.change is Change.DELETED or self.errors == 0


def review_file(
    path: str, change: Change, base_text: str | None, head_text: str | None, base_label: str
) -> FileReview:
    """Review one file. `base_label` names the base version in the diff (`main:path`), so the
    comment says where it came from rather than where a temporary copy was."""
    if change is Change.DELETED or head_text is None:
        return FileReview(path, Change.DELETED)
    head = analyse(head_text, path)
    found = FileReview(
        path,
        change,
        # Messages as the other printers show them: nothing quoted from a secret's value.
        diagnostics=tuple(render_diagnostics.redacted(d, head.document) for d in head.diagnostics),
        diagnostics_text=_as_text(head),
        mermaid=_mermaid(head),
    )
    if change is Change.ADDED or base_text is None:
        if head.topology is not None:
            found = replace(found, connection_changes=connections.changed(None, head.topology))
        return found
    base = analyse(base_text, base_label)
    if head.topology is not None:
        moved = connections.changed(base.topology, head.topology)
        found = replace(found, connection_changes=moved)
    if base.graph is None:
        note = f"`{base_label}` does not analyse (it has errors), so there is no diff."
        return replace(found, diff_note=note)
    if head.graph is None:
        return replace(found, diff_note="This version does not analyse, so there is no diff.")
    data = diff(base, head).to_dict()
    # The graph gets its own section, so the diff is rendered without its folded copy.
    return replace(found, diff_markdown=render_diff.as_markdown(data, None))


def _as_text(analysis: Analysis) -> tuple[str, ...]:
    """As `topo validate` prints them: the first of each severity, then a line for the rest."""
    chosen = render_diagnostics.listed(analysis.diagnostics)
    more = chosen.left_out()
    shown = [render_diagnostics.as_text(d, analysis.document) for d in chosen.shown]
    return (*shown, more) if more is not None else tuple(shown)


def _mermaid(analysis: Analysis) -> str | None:
    if analysis.graph is None or analysis.reach is None:
        return None
    return render_graph.as_mermaid(render_graph.graph_dict(analysis.graph, analysis.reach))
