"""docs/cli.md against the CLI itself: every command, argument, option and default, both ways.

The CLI is walked as typer builds it (`typer.main.get_command(app)`), so a command or option
added, renamed or removed in topology/cli/ fails here until docs/cli.md says the same.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from topology.cli import EXIT_INTERNAL_ERROR, EXIT_INTERRUPTED, EXIT_USER_ERROR, app

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cli.md"
TEXT = PAGE.read_text(encoding="utf-8")
HEADING = re.compile(r"^(#{2,6}) `(topo(?: [a-z0-9-]+)*)`", re.MULTILINE)


@dataclass(frozen=True)
class Command:
    path: str  # "topo lab up"
    params: tuple[Any, ...]  # typer's parameters (options and arguments), --help excluded


def _walk(command: Any, path: str) -> list[Command]:
    found = [Command(path, tuple(command.params))]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not sub.hidden:
            found += _walk(sub, f"{path} {name}")
    return found


COMMANDS = {c.path: c for c in _walk(typer.main.get_command(app), "topo")}


def _sections() -> dict[str, str]:
    """Each command heading's text, up to the next command heading (or the next ## heading)."""
    marks = list(HEADING.finditer(TEXT))
    sections = {}
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(TEXT)
        body = TEXT[mark.end() : end]
        following = re.search(r"^## ", body, re.MULTILINE)  # e.g. "## Exit codes"
        sections[mark.group(2)] = body[: following.start()] if following else body
    return sections


SECTIONS = _sections()


def _options(command: Command) -> list[Any]:
    return [p for p in command.params if p.param_type_name == "option" and not p.hidden]


def _arguments(command: Command) -> list[Any]:
    return [p for p in command.params if p.param_type_name == "argument"]


def _names(option: Any) -> list[str]:
    return [*option.opts, *option.secondary_opts]


def _mentions(section: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", section) is not None


def _cells(line: str) -> list[str]:
    """A markdown table row's cells: | name | argument | default | meaning | (`\\|` escaped)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def _row(section: str, name: str) -> list[str] | None:
    """The cells of the table row that documents `name` (an option or an argument)."""
    for line in section.splitlines():
        if line.startswith("|") and re.search(rf"`{re.escape(name)}(?:\.\.\.)?`", _cells(line)[0]):
            return _cells(line)
    return None


def test_every_command_has_a_heading_and_every_heading_is_a_command() -> None:
    missing = [
        f"docs/cli.md has no heading for `{p}`" for p in sorted(set(COMMANDS) - set(SECTIONS))
    ]
    stale = [
        f"docs/cli.md documents `{p}`, which the CLI does not have"
        for p in sorted(set(SECTIONS) - set(COMMANDS))
    ]
    assert not missing + stale, "\n".join(missing + stale)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_option_is_documented_with_its_default(path: str) -> None:
    section = SECTIONS.get(path)
    if section is None:
        pytest.skip(f"`{path}` has no section (reported by the heading test)")
    for option in _options(COMMANDS[path]):
        for name in _names(option):
            assert _mentions(section, name), f"docs/cli.md: `{path}` does not mention {name}"
        long = max(_names(option), key=len)
        row = _row(section, long)
        assert row is not None, f"docs/cli.md: `{path}` needs a table row for `{long}`"
        documented = row[2]
        if option.is_flag:
            assert documented == "off", f"docs/cli.md: `{path}` {long} is a flag: default `off`"
        elif option.default is not None:
            shown = getattr(option.default, "value", option.default)
            assert documented == f"`{shown}`", (
                f"docs/cli.md: `{path}` {long} defaults to `{shown}`, not {documented}"
            )


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_argument_is_documented(path: str) -> None:
    section = SECTIONS.get(path)
    if section is None:
        pytest.skip(f"`{path}` has no section (reported by the heading test)")
    for argument in _arguments(COMMANDS[path]):
        name = argument.name.upper()
        assert _row(section, name) is not None, (
            f"docs/cli.md: `{path}` needs a table row for its argument `{name}`"
        )


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_no_documented_option_or_argument_is_stale(path: str) -> None:
    section = SECTIONS.get(path, "")
    command = COMMANDS[path]
    real = {n for o in _options(command) for n in _names(o)}
    real |= {a.name.upper() for a in _arguments(command)}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        for name in re.findall(r"`([^`]+)`", _cells(line)[0]):
            name = name.removesuffix("...")
            assert name in real, f"docs/cli.md: `{path}` documents {name}, which it does not have"


def test_the_exit_codes_are_documented() -> None:
    table = TEXT.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in (0, 1, 2, EXIT_INTERNAL_ERROR, EXIT_INTERRUPTED, EXIT_USER_ERROR):
        assert re.search(rf"^\| {code} \|", table, re.MULTILINE), (
            f"docs/cli.md: the exit-code table has no row for {code}"
        )


def _environment_variables() -> set[str]:
    """Every variable named in topology/ as `environ.get("X")`, `environ["X"]` or a setdefault."""
    literal = r"""\s*["']([A-Z][A-Z0-9_]*)["']"""
    read = re.compile(rf"environ(?:\.get)?[\[(]{literal}|environ\.setdefault\({literal}")
    found = set()
    for source in (ROOT / "topology").rglob("*.py"):
        if "review" in source.parts:  # the GitHub Action's inputs: docs/github-action.md
            continue
        for match in read.finditer(source.read_text(encoding="utf-8")):
            found.add(match.group(1) or match.group(2))
    return found


def test_every_environment_variable_topo_reads_is_documented() -> None:
    table = TEXT.split("## Environment variables", 1)[1]
    # Set by topo for the processes it starts, not read from the user's environment.
    internal = {"PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"}
    for name in sorted(_environment_variables() - internal):
        assert f"`{name}`" in table, f"docs/cli.md: environment variable {name} is not listed"
