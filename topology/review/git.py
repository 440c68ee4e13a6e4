"""The git edge: which files a pull request changes, and their text on the base branch."""

import subprocess
from pathlib import Path

from topology.core.errors import TopoError
from topology.review.selection import ChangedFile, parse_name_status


class Git:
    def __init__(self, repository: Path) -> None:
        self.repository = repository

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", *args],
            cwd=self.repository,
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            check=False,
        )
        if check and done.returncode != 0:
            raise TopoError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
        return done

    def has_commit(self, revision: str) -> bool:
        return self._run("cat-file", "-e", f"{revision}^{{commit}}", check=False).returncode == 0

    def fetch(self, revision: str) -> None:
        """A checkout made with actions/checkout's default depth of 1 lacks the base commit."""
        self._run("fetch", "--no-tags", "--quiet", "--depth=1", "origin", revision)

    def merge_base(self, base: str, head: str = "HEAD") -> str:
        """Where the pull request's branch left the base branch, so changes that landed on the
        base since are not taken for the pull request's; the base itself when history is too
        shallow to tell (or when HEAD is GitHub's merge commit, whose merge base is the base)."""
        done = self._run("merge-base", base, head, check=False)
        return done.stdout.strip() if done.returncode == 0 else base

    def changed_files(self, base: str, head: str = "HEAD") -> list[ChangedFile]:
        output = self._run("diff", "--name-status", "--no-renames", "-z", base, head).stdout
        return parse_name_status(output)

    def show(self, revision: str, path: str) -> str | None:
        """The file's text at `revision`, or None when it did not exist there."""
        done = self._run("show", f"{revision}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None
