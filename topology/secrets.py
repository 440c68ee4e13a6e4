"""Secret references, `${env:NAME}` and `${file:path}`: recognised here, resolved only on connect.

A topology names where a secret lives, never the secret. Parsing keeps references as text; a
client edge calls `resolve` just before it connects, so a missing variable is reported then,
naming the cluster and the variable, and the value itself is never printed or planned.
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from topology.errors import TopoError

_REFERENCE = re.compile(r"\$\{(?P<kind>env|file):(?P<name>[^}]+)\}")
# Client properties whose values are secrets when they are written inline. An OAuth token
# endpoint's URL (`sasl.oauthbearer.token.endpoint.url`) is an address, not a token.
SECRET_KEY = re.compile(
    r"(password|secret|jaas|token(?!\.endpoint\.url)|credential)", re.IGNORECASE
)


class SecretError(TopoError):
    """A referenced secret is missing when a client needs it."""


@dataclass(frozen=True)
class Reference:
    kind: str  # "env" or "file"
    name: str

    def __str__(self) -> str:
        return f"${{{self.kind}:{self.name}}}"


def reference(value: str) -> Reference | None:
    """The reference if the whole value is one, else None."""
    match = _REFERENCE.fullmatch(value.strip())
    return Reference(match["kind"], match["name"]) if match else None


def reference_problem(value: str) -> str | None:
    """Why a value that looks like a reference is not a valid one, or None."""
    if "${" not in value or reference(value):
        return None
    return (
        f"'{value}' looks like a secret reference but is not one; write the whole value as "
        "${env:NAME} or ${file:path}"
    )


def resolve(
    value: str,
    *,
    cluster: str,
    setting: str,
    environ: Mapping[str, str],
    read_file: Callable[[Path], str] = lambda path: path.read_text(encoding="utf-8"),
    base: Path = Path(),
) -> str:
    """The secret's value: from the environment or a file (relative to the topology's folder)."""
    found = reference(value)
    if found is None:
        return value
    if found.kind == "env":
        if found.name not in environ:
            raise SecretError(
                f"cluster {cluster}: {setting} needs environment variable {found.name}, which "
                "is not set"
            )
        return environ[found.name]
    path = base / found.name
    try:
        return read_file(path).strip()
    except OSError as problem:
        raise SecretError(
            f"cluster {cluster}: {setting} needs file {path}, which cannot be read "
            f"({problem.strerror or type(problem).__name__})"
        ) from None
    except UnicodeDecodeError:  # its own text quotes a byte of the secret, so it is not shown
        raise SecretError(
            f"cluster {cluster}: {setting} needs file {path}, which is not UTF-8 text"
        ) from None
