"""The pure parts of the pull-request review: which files count, the comment's building blocks
and the workflow commands that mark diagnostics on their lines."""

from pathlib import Path

import pytest

from topology.core.diagnostics import Span, error
from topology.review.annotations import workflow_commands
from topology.review.comment import MARKER, body, fenced, fit
from topology.review.findings import FileReview, review_file
from topology.review.selection import (
    Change,
    ChangedFile,
    glob_regex,
    is_reviewed,
    looks_like_topology,
    parse_name_status,
    parse_patterns,
)

QUICKSTART = (Path(__file__).resolve().parents[2] / "examples" / "quickstart.yaml").read_text()


@pytest.mark.parametrize(
    ("pattern", "path", "matched"),
    [
        ("**/*.yaml", "top.yaml", True),
        ("**/*.yaml", "deep/er/down.yaml", True),
        ("*.yml", "nested/any.yml", True),  # no slash: the name in any folder, like .gitignore
        ("topologies/*.yaml", "topologies/a.yaml", True),
        ("topologies/*.yaml", "topologies/sub/a.yaml", False),
        ("topologies/**", "topologies/sub/a.yaml", True),
        ("a?.yaml", "ab.yaml", True),
        ("a?.yaml", "a/.yaml", False),
        ("prod.yaml", "prodXyaml", False),  # the dot is a dot
    ],
)
def test_glob_patterns(pattern: str, path: str, matched: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matched


def test_patterns_are_split_on_lines_and_spaces() -> None:
    assert parse_patterns("a/*.yaml\n  b/*.yml c.yaml\n") == ("a/*.yaml", "b/*.yml", "c.yaml")
    assert parse_patterns("") == ()


def test_git_name_status_keeps_odd_paths_and_skips_unmerged() -> None:
    output = "M\0with space.yaml\0A\0new.yml\0D\0gone.yaml\0T\0link.yaml\0U\0conflict.yaml\0"
    assert parse_name_status(output) == [
        ChangedFile("with space.yaml", Change.MODIFIED),
        ChangedFile("new.yml", Change.ADDED),
        ChangedFile("gone.yaml", Change.DELETED),
        ChangedFile("link.yaml", Change.MODIFIED),
    ]
    assert parse_name_status("") == []


@pytest.mark.parametrize(
    ("text", "topology"),
    [
        (QUICKSTART, True),
        ("version: 1\nclusters: {a: {bootstrap: [\n", True),  # broken YAML still gets reviewed
        ("on: pull_request\njobs: {}\n", False),  # a workflow
        ("version: '3.8'\nservices: {}\n", False),  # a compose file
        ("version: 1\nspec:\n  clusters: {}\n", False),  # clusters, but not at the top
    ],
)
def test_a_topology_is_recognised_by_its_top_level_keys(text: str, topology: bool) -> None:
    assert looks_like_topology(text) is topology


def test_explicit_patterns_take_every_match_without_sniffing() -> None:
    assert is_reviewed("conf/site.yaml", "not: a topology\n", ("conf/*.yaml",))
    assert not is_reviewed("conf/site.yaml", "not: a topology\n", ())
    assert not is_reviewed("conf/site.json", QUICKSTART, ())


def test_a_fence_outlasts_any_backticks_inside() -> None:
    assert fenced("plain", "text") == ["```text", "plain", "```"]
    assert fenced("a ```` b") == ["`````", "a ```` b", "`````"]


def test_a_long_body_is_cut_at_a_line_with_its_code_block_closed() -> None:
    text = "head\n```text\n" + "x" * 50 + "\n" + "y" * 50 + "\n```\n"
    cut = fit(text, limit=110)
    assert len(cut) <= 110 + 10
    assert cut.startswith("head\n```text\n")
    assert "\n```\n\n… cut here" in cut
    assert fit(text, limit=len(text)) == text


def test_no_topology_changes_say_so() -> None:
    assert body([], base_ref="main", head_sha="abc", plan_requested=False) == (
        f"{MARKER}\n## topo review: no topology changes\n\n"
        "This pull request changes no topology file.\n"
    )


def test_a_base_that_does_not_analyse_gives_a_note_not_a_diff() -> None:
    found = review_file(
        "t.yaml", Change.MODIFIED, "version: 1\nclusters: [\n", QUICKSTART, "main:t.yaml"
    )
    assert found.valid and found.diff_markdown is None
    assert found.diff_note == "`main:t.yaml` does not analyse (it has errors), so there is no diff."
    text = body([found], base_ref="main", head_sha="abc", plan_requested=True)
    assert f"**topo diff**: {found.diff_note}" in text
    assert "**topo plan**: not run." in text  # valid, but no plan was handed over


def test_diagnostics_become_escaped_workflow_commands() -> None:
    problem = error("T201", "100% wrong:\nsee line 2", Span("a,b.yaml", 3, 5))
    review = FileReview("dir/a,b.yaml", Change.MODIFIED, diagnostics=(problem,))
    assert workflow_commands([review]) == [
        "::error file=dir/a%2Cb.yaml,line=3,col=5,title=topo T201::100%25 wrong:%0Asee line 2"
    ]
