"""The GitHub edge: find, create and update the review comment through the REST API.

Only the standard library (urllib), so the action installs nothing beyond topo. The token goes
into the Authorization header and nowhere else: never into a URL, a message or the log.
"""

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from topology.core.errors import TopoError

_PAGE_SIZE = 100


@dataclass(frozen=True)
class PullRequestComments:
    """The comments of one pull request (GitHub keeps them as the issue's comments)."""

    api_url: str  # GITHUB_API_URL: the public API, or a GitHub Enterprise Server's
    repository: str  # owner/name
    number: int
    token: str

    def find(self, marker: str) -> int | None:
        """The id of the first comment whose body starts with `marker`."""
        page = 1
        while True:
            comments = self._request(
                "GET",
                f"/repos/{self.repository}/issues/{self.number}/comments"
                f"?per_page={_PAGE_SIZE}&page={page}",
            )
            for comment in comments:
                if str(comment.get("body", "")).startswith(marker):
                    return int(comment["id"])
            if len(comments) < _PAGE_SIZE:
                return None
            page += 1

    def create(self, body: str) -> int:
        path = f"/repos/{self.repository}/issues/{self.number}/comments"
        return int(self._request("POST", path, {"body": body})["id"])

    def update(self, comment_id: int, body: str) -> None:
        self._request(
            "PATCH", f"/repos/{self.repository}/issues/comments/{comment_id}", {"body": body}
        )

    def _request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            self.api_url.rstrip("/") + path,
            method=method,
            data=None if payload is None else json.dumps(payload).encode(),
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
                "User-Agent": "topo-review",
                "X-GitHub-Api-Version": "2022-11-28",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as problem:
            detail = _message(problem)
            raise TopoError(f"GitHub API: {method} {path}: {problem.code} {detail}") from None
        except urllib.error.URLError as problem:
            raise TopoError(f"GitHub API: {method} {path}: {problem.reason}") from None


def _message(problem: urllib.error.HTTPError) -> str:
    """GitHub's own explanation (`Resource not accessible by integration`), when it gave one."""
    try:
        return str(json.loads(problem.read()).get("message", problem.reason))
    except (ValueError, AttributeError):
        return str(problem.reason)
