"""The pull request a run is about, read from the webhook event GitHub Actions saves to a file
(GITHUB_EVENT_PATH)."""

from dataclasses import dataclass
from typing import Any

from topology.core.errors import TopoError


@dataclass(frozen=True)
class PullRequest:
    number: int
    base_ref: str  # the base branch's name, e.g. main
    base_sha: str
    head_sha: str


def pull_request(event: dict[str, Any]) -> PullRequest:
    """From a `pull_request` (or `pull_request_target`) event; other events have no base."""
    found = event.get("pull_request")
    if not isinstance(found, dict):
        raise TopoError("the event is not a pull request: run this action on `pull_request` events")
    try:
        return PullRequest(
            number=int(found["number"]),
            base_ref=str(found["base"]["ref"]),
            base_sha=str(found["base"]["sha"]),
            head_sha=str(found["head"]["sha"]),
        )
    except (KeyError, TypeError, ValueError) as problem:
        raise TopoError(f"the pull-request event lacks {problem}") from None
