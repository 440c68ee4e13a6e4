"""Secret references, `${env:NAME}` and `${file:path}`: recognised here, resolved only on connect.

A topology names where a secret lives, never the secret. Parsing keeps references as text; a
client edge calls `resolve` just before it connects, so a missing variable is reported then,
naming the cluster and the variable, and the value itself is never printed or planned.

`is_secret_key` decides which property names hold secrets (see its docstring for the rule):
`validate` warns when such a value is written in the file (T206), `import mm2` never copies one,
and no diagnostic shows a line that holds one.
"""

import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import re2  # type: ignore[import-untyped]

from topology.core.errors import TopoError

_REFERENCE = re.compile(r"\$\{(?P<kind>env|file):(?P<name>[^}]+)\}")

# -- which property names hold secrets ------------------------------------------------------

# Secret words, matched against each word of a name with one typo allowed (a letter missing,
# added, changed, or two swapped: `pasword`, `passowrd`, `secert`, `credentials`).
_FUZZY_WORDS = ("password", "passwd", "passphrase", "secret", "token", "credential")
# Short words, matched exactly (one typo away from a short word is too many ordinary words).
_SHORT_WORDS = frozenset({"pass", "pwd", "pw", "pswd", "jaas", "jass", "jas"})
# Words long enough to be found inside a longer one (`keystorepassword`, `clientsecret`).
_GLUED_WORDS = ("password", "passwd", "passphrase", "secret", "credential", "jaas")
# A word after the secret word that makes the name about something else than the secret: where
# it is (`...token.endpoint.url`, `...private.key.file`), what kind or whence
# (`basic.auth.credentials.source`), or when (`delegation.token.expiry.time.ms`).
_ABOUT_SOMETHING_ELSE = frozenset(
    {
        *("location", "file", "path", "dir", "directory", "url", "uri", "endpoint"),
        *("type", "source", "class", "algorithm", "mechanism", "provider", "id", "name"),
        *("ms", "seconds", "expiry", "lifetime", "max", "min", "length", "size", "cmd"),
        *("enable", "enabled", "header", "claim", "policy", "format"),
        *("cb", "callback", "handler", "refresh"),
    }
)
# Private key material written inline: `key` after one of these (`ssl.key`, `ssl.keystore.key`,
# `private.key`), as the last word or before one of _KEY_ENCODINGS (`ssl.key.pem`).
_KEY_OWNERS = frozenset({"ssl", "tls", "keystore", "private", "client", "signing"})
_KEY_ENCODINGS = frozenset({"pem", "der", "data", "material", "value", "content", "string"})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


_PLAIN_NAME = re.compile(r"[a-z][a-z.]*")


def key_words(name: str) -> list[str]:
    """The words of a property name, lower case: split at anything not a letter or digit and
    at camelCase humps (`ssl.keyStorePassword` -> ssl, key, store, password)."""
    if _PLAIN_NAME.fullmatch(name):  # most names: quicker than the general split below
        return [word for word in name.split(".") if word]
    return [word.lower() for word in _WORD.findall(name)]


def is_secret_key(name: str) -> bool:
    """Whether a property (or topology key) of this name holds a secret.

    The rule, on the name's words (`key_words`):

    1. A word is a secret word when it is `password`, `passwd`, `passphrase`, `secret`, `token`
       or `credential`, or one typo away from one (`pasword`, `secrets`, `credentials`); when
       it is `pass`, `pwd`, `pw`, `pswd`, `jaas`, `jass` or `jas`; or when it holds `password`,
       `passwd`, `passphrase`, `secret`, `credential` or `jaas` (`keystorepassword`).
    2. The name is a secret if it has a secret word and no word after the last one says the name
       is about something else: a location (`...token.endpoint.url`), a kind or source
       (`basic.auth.credentials.source`), a time (`delegation.token.expiry.time.ms`), an id;
       but `id` alone after `secret` is a credential (Vault AppRole's `secret.id`).
    3. Inline private keys are secrets: `key` after `ssl`, `tls`, `keystore`, `private`,
       `client` or `signing`, as the last word or before `pem`, `der`, `data`... (`ssl.key.pem`,
       `ssl.keystore.key`), but not `ssl.key.location` (a path) or `key.serializer`.
    4. `user.info` at the end (`basic.auth.user.info`: user:password) is a secret.
    """
    words = key_words(name)
    last = -1
    for i, word in enumerate(words):
        if word in _SECRET_WORDS or (len(word) > 6 and _glued(word)):
            last = i
    if last >= 0 and _ABOUT_SOMETHING_ELSE.isdisjoint(words[last + 1 :]):
        return True
    if last >= 0 and words[last + 1 :] == ["id"] and words[last].startswith("secret"):
        return True  # a secret id (Vault AppRole's `secret.id`) is the credential itself
    if "key" in words and any(_private_key(words, i) for i in range(1, len(words))):
        return True
    return words[-2:] == ["user", "info"]


def _private_key(words: list[str], i: int) -> bool:
    """Whether words[i] is `key` naming inline private key material (rule 3)."""
    if words[i] != "key" or words[i - 1] not in _KEY_OWNERS:
        return False
    return i == len(words) - 1 or words[i + 1] in _KEY_ENCODINGS


def _glued(word: str) -> bool:
    return any(secret in word for secret in _GLUED_WORDS)


_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _one_typo_away(word: str) -> set[str]:
    """Every word one typo from `word`, and the word itself: a letter missing, added or
    changed, or two neighbours swapped (the optimal-string-alignment distance is at most 1)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    found = {word}
    found.update(a + b[1:] for a, b in splits if b)  # a letter missing
    found.update(a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1)  # two swapped
    found.update(a + c + b[1:] for a, b in splits if b for c in _LETTERS)  # one changed
    found.update(a + c + b for a, b in splits for c in _LETTERS)  # one added
    return found


# Every secret word, spelled right or one typo off, to look a name's words up in one step
# (a topology may have thousands of client properties, and validate checks each).
_SECRET_WORDS = frozenset(
    {
        *_SHORT_WORDS,
        *(typo for word in _FUZZY_WORDS for typo in _one_typo_away(word) if len(typo) >= 5),
    }
)


def secret_name_parts(text: str) -> Iterator[int]:
    """Where in `text` a part that every secret's name holds starts: a name `is_secret_key`
    accepts contains, in any case, a secret word (or one a typo off), `key` or `info`, since its
    words are pieces of it. Text without one names no secret, so a caller scanning megabytes
    looks closer only where one starts. One pass of RE2 (Python's `re` would take minutes on
    3,450 alternatives)."""
    for found in _name_parts().finditer(text):
        yield found.start()


@cache
def _name_parts() -> Any:
    options = re2.Options()
    options.case_sensitive = False
    options.max_mem = 64 << 20  # the automaton of 3,450 words; compiled in about 25 ms
    parts = sorted({*_SECRET_WORDS, *_GLUED_WORDS, "key", "info"})
    return re2.compile("|".join(re.escape(part) for part in parts), options)


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


def reference_problem(value: str, *, setting: str | None = None) -> str | None:
    """Why a value that looks like a reference is not a valid one, or None. With `setting` (the
    value is a secret's) the message names the setting and does not quote the value."""
    if "${" not in value or reference(value):
        return None
    if setting is not None:
        return (
            f"{setting} looks like a secret reference but is not one (its value is not shown: "
            "it may hold the secret); write the whole value as ${env:NAME} or ${file:path}"
        )
    return (
        f"'{value}' looks like a secret reference but is not one; write the whole value as "
        "${env:NAME} or ${file:path}"
    )


# A secret file holds a password, a token or a key: a few KB at most. Anything larger, and
# anything not a regular file (/dev/zero, a named pipe nobody writes, a folder), is refused
# before it is read, so a reference can neither exhaust memory nor block forever.
MAX_SECRET_FILE_BYTES = 64 * 1024


class NotASecretFileError(OSError):
    """A `${file:...}` reference to something that is not a small regular file topo may read;
    its `reason` completes "needs file PATH, which ..."."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_secret_file(path: Path, roots: Sequence[Path] | None = None) -> str:
    """The text of a small regular file, read with a bound; with `roots`, only a file whose
    real path (symbolic links followed) is under one of them. Opened without blocking, so a
    named pipe is refused rather than waited on."""
    if roots is not None:
        real = Path(os.path.realpath(path))
        if not any(real.is_relative_to(os.path.realpath(root)) for root in roots):
            allowed = ", ".join(str(root) for root in roots) or "nowhere"
            raise NotASecretFileError(
                f"is outside the folders secret files may be read from here ({allowed})"
            )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    descriptor = os.open(path, flags)
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            kind = "a folder" if stat.S_ISDIR(found.st_mode) else "a device or pipe"
            raise NotASecretFileError(f"is {kind}, not a regular file")
        if found.st_size > MAX_SECRET_FILE_BYTES:
            raise NotASecretFileError(_too_large())
        chunks, size = [], 0
        while size <= MAX_SECRET_FILE_BYTES:  # a file growing as it is read stops here too
            chunk = os.read(descriptor, MAX_SECRET_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_SECRET_FILE_BYTES:
            raise NotASecretFileError(_too_large())
    finally:
        os.close(descriptor)
    return b"".join(chunks).decode("utf-8")


def _too_large() -> str:
    return f"is larger than a secret file may be ({MAX_SECRET_FILE_BYTES // 1024} KiB)"


def resolve(
    value: str,
    *,
    cluster: str,
    setting: str,
    environ: Mapping[str, str],
    read_file: Callable[[Path], str] = read_secret_file,
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
    except NotASecretFileError as problem:
        raise SecretError(
            f"cluster {cluster}: {setting} needs file {path}, which {problem.reason}"
        ) from None
    except OSError as problem:
        raise SecretError(
            f"cluster {cluster}: {setting} needs file {path}, which cannot be read "
            f"({problem.strerror or type(problem).__name__})"
        ) from None
    except UnicodeDecodeError:  # its own text quotes a byte of the secret, so it is not shown
        raise SecretError(
            f"cluster {cluster}: {setting} needs file {path}, which is not UTF-8 text"
        ) from None
