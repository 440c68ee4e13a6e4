"""The pull-request comment: one Markdown body built from the file reviews, nothing else.

The body starts with a hidden marker so the next run finds this comment and edits it instead of
adding another. Sections reuse topo's own renderers (`topo diff --format markdown`, `topo plan
--format markdown`, `topo graph --format mermaid`), so the comment reads like the commands.
"""

import re
from collections.abc import Sequence

from topology.review.findings import FileReview
from topology.review.selection import Change

MARKER = "<!-- topo-review -->"
# GitHub refuses comment bodies over 65,536 characters; keep room for the cut notice.
LIMIT = 65_000
_CUT_NOTICE = (
    "\n\n… cut here: the whole review is longer than a comment may be; the job log has it.\n"
)
_BACKTICKS = re.compile(r"`{3,}")


def body(
    reviews: Sequence[FileReview], *, base_ref: str, head_sha: str, plan_requested: bool
) -> str:
    """The whole comment. `head_sha` says which commit it describes, as it is edited in place."""
    lines = [MARKER, f"## topo review: {_verdict(reviews)}", ""]
    if not reviews:
        return "\n".join([*lines, "This pull request changes no topology file.", ""])
    lines += [f"Compared with `{base_ref}`, at pull-request commit `{head_sha[:7]}`.", ""]
    lines += [
        f"- `{r.path}` ({r.change})" + ("" if r.change is Change.DELETED else f": {_status(r)}")
        for r in reviews
    ]
    if not plan_requested:
        lines += [
            "",
            "`topo plan` did not run: the workflow does not give this review cluster access "
            "(the action's `plan` input).",
        ]
    lines.append("")
    for review in reviews:
        lines += _section(review, base_ref, plan_requested)
    return "\n".join(lines)


def fit(text: str, limit: int = LIMIT) -> str:
    """The body cut to what GitHub accepts, at a line, with any open code block closed."""
    if len(text) <= limit:
        return text
    kept = text[: limit - len(_CUT_NOTICE) - 10].rsplit("\n", 1)[0]
    open_fence = _open_fence(kept)
    return kept + (f"\n{open_fence}" if open_fence else "") + _CUT_NOTICE


def fenced(text: str, language: str = "") -> list[str]:
    """A code block whose fence is longer than any run of backticks inside it, so a topology
    line holding ``` cannot end the block early."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=2)
    fence = "`" * (longest + 1)
    return [f"{fence}{language}", text.rstrip("\n"), fence]


def _verdict(reviews: Sequence[FileReview]) -> str:
    if not reviews:
        return "no topology changes"
    invalid = sum(not r.valid for r in reviews)
    failed_plans = sum(r.plan is not None and not r.plan.ok for r in reviews)
    count = _count(len(reviews), "topology file")
    if invalid:
        return f"❌ {invalid} of {count} invalid"
    if failed_plans:
        return f"❌ {count} valid, {_count(failed_plans, 'plan')} failed"
    return f"✅ {count}, all valid"


def _status(review: FileReview) -> str:
    if review.errors:
        return f"❌ {_count(review.errors, 'error')}, {_count(review.warnings, 'warning')}"
    if review.warnings:
        return f"✅ valid, {_count(review.warnings, 'warning')}"
    return "✅ valid"


def _section(review: FileReview, base_ref: str, plan_requested: bool) -> list[str]:
    lines = ["---", "", f"## `{review.path}` ({review.change})", ""]
    if review.change is Change.DELETED:
        return [
            *lines,
            f"Deleted: there is nothing to validate or draw. Removing the file changes nothing "
            f"on the clusters by itself; replication started from it runs until `topo stop` is "
            f"run with the version on `{base_ref}`.",
            "",
        ]
    lines += [f"**topo validate**: {_status(review)}", ""]
    if review.diagnostics_text:
        lines += [*fenced("\n".join(review.diagnostics_text), "text"), ""]
    if review.change is Change.ADDED:
        lines += [f"New file: there is no version on `{base_ref}` to diff against.", ""]
    elif review.diff_markdown is not None:
        lines += [review.diff_markdown.rstrip("\n"), ""]
    elif review.diff_note is not None:
        lines += [f"**topo diff**: {review.diff_note}", ""]
    if plan_requested:
        lines += _plan(review)
    if review.mermaid is not None:
        lines += ["### topo graph", "", *fenced(review.mermaid, "mermaid"), ""]
    return lines


def _plan(review: FileReview) -> list[str]:
    if review.plan is None:
        reason = ", as the file does not validate" if not review.valid else ""
        return [f"**topo plan**: not run{reason}.", ""]
    if review.plan.skipped is not None:
        return [f"**topo plan**: not run: {review.plan.skipped}", ""]
    if review.plan.error is not None:
        return ["### topo plan: failed", "", *fenced(review.plan.error, "text"), ""]
    return [(review.plan.markdown or "").rstrip("\n"), ""]


def _open_fence(text: str) -> str | None:
    """The fence of a code block left open in `text`, if any."""
    open_fence = None
    for line in text.splitlines():
        stripped = line.strip()
        if open_fence is None:
            match = re.match(r"`{3,}", stripped)
            if match:
                open_fence = match.group(0)
        elif stripped == open_fence:
            open_fence = None
    return open_fence


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
