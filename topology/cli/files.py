"""Reading the user's files: one place that turns OS errors into one clear line."""

import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from topology.core.errors import TopoError
from topology.core.secrets import read_secret_file

# Folders `${file:...}` secrets may be read from, separated by os.pathsep; unset: anywhere.
# The review action sets it for `topo plan` on a pull request (the repository, and the folders
# the workflow names), so a pull request cannot have a runner's file sent to a cluster.
SECRET_FILE_ROOTS = "TOPO_SECRET_FILE_ROOTS"


def secret_file_reader() -> Callable[[Path], str]:
    """How `${file:...}` secrets are read here: a small regular file, under the folders
    TOPO_SECRET_FILE_ROOTS names when it is set."""
    named = os.environ.get(SECRET_FILE_ROOTS)
    if named is None:
        return read_secret_file
    roots = [Path(root) for root in named.split(os.pathsep) if root]
    return partial(read_secret_file, roots=roots)


def read_text(path: str) -> str:
    """The file's text; `-` reads standard input."""
    if path == "-":
        return sys.stdin.read()
    try:
        data = Path(path).read_bytes()
        return data.decode("utf-8")
    except FileNotFoundError:
        raise TopoError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TopoError(f"{path}: is a directory, not a topology file") from None
    except UnicodeDecodeError as problem:
        line, column = _line_column(data, problem.start)
        raise TopoError(
            f"{path}:{line}:{column}: not UTF-8 text ({problem.reason}, byte "
            f"0x{data[problem.start]:02x})"
        ) from None
    except OSError as problem:
        raise TopoError(f"{path}: cannot read it ({problem.strerror})") from None


def _line_column(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a byte offset in text decoded up to it."""
    before = data[:offset]
    line_start = before.rfind(b"\n") + 1
    column = len(before[line_start:].decode("utf-8", "replace")) + 1
    return before.count(b"\n") + 1, column


def write_text(path: str, text: str) -> None:
    """Write atomically, so an interrupted run never leaves half a file."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(target)
    except OSError as problem:
        raise TopoError(f"{path}: cannot write it ({problem.strerror})") from None
