"""Reading the user's files: one place that turns OS errors into one clear line."""

import sys
from pathlib import Path

from topology.errors import TopoError


def read_text(path: str) -> str:
    """The file's text; `-` reads standard input."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TopoError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TopoError(f"{path}: is a directory, not a topology file") from None
    except UnicodeDecodeError as problem:
        raise TopoError(
            f"{path}: not UTF-8 text ({problem.reason} at byte {problem.start})"
        ) from None
    except OSError as problem:
        raise TopoError(f"{path}: cannot read it ({problem.strerror})") from None


def write_text(path: str, text: str) -> None:
    """Write atomically, so an interrupted run never leaves half a file."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(target)
    except OSError as problem:
        raise TopoError(f"{path}: cannot write it ({problem.strerror})") from None
