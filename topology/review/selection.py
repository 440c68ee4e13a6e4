"""Which changed files a review looks at: the paths git reports, filtered by glob patterns.

Without patterns, a changed `*.yaml`/`*.yml` file is a topology when its text has the two
top-level keys every topology has (`version:` and `clusters:`), so workflow files, compose files
and Helm values are left alone. The check reads lines rather than parsing YAML on purpose: a
topology with a syntax error must still be reviewed, and fail.
"""

import re
from dataclasses import dataclass
from enum import StrEnum

YAML_PATTERNS = ("**/*.yaml", "**/*.yml")
_TOP_LEVEL_VERSION = re.compile(r"^version\s*:", re.MULTILINE)
_TOP_LEVEL_CLUSTERS = re.compile(r"^clusters\s*:", re.MULTILINE)


class Change(StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"


@dataclass(frozen=True)
class ChangedFile:
    path: str
    change: Change


# `git diff --name-status` letters; a type change (T) is still the same file, modified.
_CHANGE_OF_STATUS = {
    "A": Change.ADDED,
    "M": Change.MODIFIED,
    "T": Change.MODIFIED,
    "D": Change.DELETED,
}


def parse_name_status(output: str) -> list[ChangedFile]:
    """The files of `git diff --name-status --no-renames -z`: `STATUS\\0PATH\\0` pairs.

    -z keeps paths with spaces or quotes as they are. Statuses other than added, modified,
    type-changed or deleted (unmerged, unknown) are left out: there is no topology to review.
    """
    fields = output.split("\0")
    changed = []
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        change = _CHANGE_OF_STATUS.get(status[:1])
        if change is not None and path:
            changed.append(ChangedFile(path, change))
    return changed


def parse_patterns(text: str) -> tuple[str, ...]:
    """Glob patterns from an action input: one per line or separated by spaces."""
    return tuple(text.split())


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A gitignore-like glob as a full-match regex: `**/` any folders (or none), `*` and `?`
    within one path segment. A pattern without `/` matches the file name in any folder."""
    if "/" not in pattern:
        pattern = f"**/{pattern}"
    parts = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            parts.append("(?:[^/]+/)*")
            index += 3
        elif pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(parts))


def matches(path: str, patterns: tuple[str, ...]) -> bool:
    return any(glob_regex(pattern).fullmatch(path) for pattern in patterns)


def looks_like_topology(text: str) -> bool:
    return bool(_TOP_LEVEL_VERSION.search(text) and _TOP_LEVEL_CLUSTERS.search(text))


def is_reviewed(path: str, text: str, patterns: tuple[str, ...]) -> bool:
    """With patterns, every matching file is a topology (so a broken one fails the check);
    without, a YAML file counts when it looks like one."""
    if patterns:
        return matches(path, patterns)
    return matches(path, YAML_PATTERNS) and looks_like_topology(text)
