"""Reading the user's files: one place that turns OS errors into one clear line."""

import sys
from pathlib import Path

from topology.errors import TopoError


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
