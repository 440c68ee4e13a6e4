"""`python -m topology.review`: the review a pull request gets, run by `action.yml`.

The edge that wires the pure parts together: it reads the event and the action's inputs from
the environment, asks git what changed, runs `topo plan` when the workflow has cluster access,
and posts or edits the one review comment. Exit 1 when a topology does not validate (or a
requested plan fails), so the check fails; the comment is posted either way.
"""

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TextIO

from topology.core.errors import TopoError
from topology.review import comment
from topology.review.annotations import workflow_commands
from topology.review.event import PullRequest, pull_request
from topology.review.findings import FileReview, PlanOutcome, review_file
from topology.review.git import Git
from topology.review.github import PullRequestComments
from topology.review.selection import Change, is_reviewed, parse_patterns

# What GitHub Actions documents as GITHUB_API_URL on github.com; set by the runner anyway.
_PUBLIC_API_URL = "https://api.github.com"
_PLAN_ERROR_LINES = 20

PlanRunner = Callable[[str, Path], PlanOutcome]
# What the CLI reads: the folders `${file:...}` secrets may be read from (topology/cli/files.py).
SECRET_FILE_ROOTS = "TOPO_SECRET_FILE_ROOTS"


def plan_with_cli(path: str, repository: Path, secret_roots: Sequence[Path] = ()) -> PlanOutcome:
    """`topo plan PATH --format markdown`, by the CLI: it owns the Kafka client, the secret
    references and the one-line errors for clusters that cannot be reached. `${file:...}`
    references are read only under the repository and `secret_roots`."""
    beside_python = Path(sys.executable).with_name("topo")
    topo = str(beside_python) if beside_python.exists() else shutil.which("topo") or "topo"
    roots = os.pathsep.join(str(root) for root in (repository, *secret_roots))
    done = subprocess.run(
        [topo, "plan", path, "--format", "markdown"],
        cwd=repository,
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        check=False,
        env={**os.environ, SECRET_FILE_ROOTS: roots},
    )
    if done.returncode != 0:
        error = "\n".join(done.stderr.strip().splitlines()[-_PLAN_ERROR_LINES:])
        return PlanOutcome(error=error or f"topo plan exited with {done.returncode}")
    return PlanOutcome(markdown=done.stdout)


def main(
    environ: Mapping[str, str] | None = None,
    repository: Path | None = None,
    run_plan: PlanRunner | None = None,
    log: TextIO | None = None,
) -> int:
    environ = os.environ if environ is None else environ
    log = sys.stdout if log is None else log
    try:
        return _review(environ, repository or Path.cwd(), run_plan, log)
    except TopoError as problem:
        print(f"::error title=topo review::{problem}", file=log)
        return 1


def _review(
    environ: Mapping[str, str], repository: Path, run_plan: PlanRunner | None, log: TextIO
) -> int:
    event_path = _required(environ, "GITHUB_EVENT_PATH")
    try:
        pull = pull_request(json.loads(Path(event_path).read_text(encoding="utf-8")))
    except (OSError, ValueError) as problem:
        raise TopoError(f"cannot read the event {event_path}: {problem}") from None
    plan_requested = _flag(environ, "INPUT_PLAN", default=False)
    allowed = _flag(environ, "INPUT_ALLOW_CONNECTION_CHANGES", default=False)
    if run_plan is None:
        named = environ.get("INPUT_SECRET_FILE_PATHS", "").split()
        roots = [repository / path for path in named]  # an absolute path stays as it is
        run_plan = partial(plan_with_cli, secret_roots=roots)
    reviews = _reviews(Git(repository), pull, parse_patterns(environ.get("INPUT_FILES", "")))
    if plan_requested:
        reviews = [
            replace(r, plan=_plan(r, repository, run_plan, allowed))
            if r.change is not Change.DELETED and r.valid
            else r
            for r in reviews
        ]
    text = comment.fit(
        comment.body(
            reviews, base_ref=pull.base_ref, head_sha=pull.head_sha, plan_requested=plan_requested
        )
    )
    for command in workflow_commands(reviews):
        print(command, file=log)
    print(f"::group::topo review comment\n{text}\n::endgroup::", file=log)
    _append(environ.get("GITHUB_STEP_SUMMARY"), text + "\n")
    if _flag(environ, "INPUT_COMMENT", default=True):
        _post(environ, pull, text, any_reviews=bool(reviews), log=log)
    passed = all(r.valid and (r.plan is None or r.plan.ok) for r in reviews)
    _append(environ.get("GITHUB_OUTPUT"), f"valid={'true' if passed else 'false'}\n")
    return 0 if passed else 1


def _plan(review: FileReview, repository: Path, run_plan: PlanRunner, allowed: bool) -> PlanOutcome:
    """The plan of one valid file, unless it connects to a cluster differently than the base
    branch does and no maintainer allowed that (the plan would send the job's credentials
    where the pull request says)."""
    if review.connection_changes and not allowed:
        clusters = "; ".join(review.connection_changes)
        return PlanOutcome(
            skipped=(
                f"this pull request changes how topo connects to {clusters}. Planning it would "
                "send this job's secrets to the addresses and in the way the pull request "
                "says, so it is planned only when a maintainer allows it (the action's "
                "`allow-connection-changes` input)."
            )
        )
    return run_plan(review.path, repository)


def _reviews(git: Git, pull: PullRequest, patterns: tuple[str, ...]) -> list[FileReview]:
    if not git.has_commit(pull.base_sha):
        git.fetch(pull.base_sha)
    base = git.merge_base(pull.base_sha)
    reviews = []
    for changed in git.changed_files(base):
        base_text = None if changed.change is Change.ADDED else git.show(base, changed.path)
        head_text = (
            None if changed.change is Change.DELETED else _read(git.repository, changed.path)
        )
        if not is_reviewed(changed.path, head_text or base_text or "", patterns):
            continue
        label = f"{pull.base_ref}:{changed.path}"
        reviews.append(review_file(changed.path, changed.change, base_text, head_text, label))
    return reviews


def _post(
    environ: Mapping[str, str], pull: PullRequest, text: str, *, any_reviews: bool, log: TextIO
) -> None:
    """Edit the earlier review comment, or add one when there is something to say. A token that
    may not comment (a pull request from a fork) is a warning: the check still reports."""
    comments = PullRequestComments(
        api_url=environ.get("GITHUB_API_URL") or _PUBLIC_API_URL,
        repository=_required(environ, "GITHUB_REPOSITORY"),
        number=pull.number,
        token=environ.get("INPUT_TOKEN") or _required(environ, "GITHUB_TOKEN"),
    )
    try:
        existing = comments.find(comment.MARKER)
        if existing is not None:
            comments.update(existing, text)
            print(f"Updated the review comment {existing}.", file=log)
        elif any_reviews:
            print(f"Added the review comment {comments.create(text)}.", file=log)
    except TopoError as problem:
        print(f"::warning title=topo review::could not comment: {problem}", file=log)


def _read(repository: Path, path: str) -> str | None:
    """The changed file's text in the checkout; None for a symlink that leads out of the
    repository (a pull request must not get a runner's files quoted into its comment)."""
    file = repository / path
    try:
        if not file.resolve().is_relative_to(repository.resolve()):
            return None
        return file.read_text(encoding="utf-8", errors="replace")
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return None


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(text)


def _required(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name)
    if not value:
        raise TopoError(f"{name} is not set; run this inside a GitHub Actions job")
    return value


def _flag(environ: Mapping[str, str], name: str, *, default: bool) -> bool:
    value = environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("true", "false"):
        return value == "true"
    raise TopoError(f"{name} must be true or false, not {value!r}")


if __name__ == "__main__":
    sys.exit(main())
