"""The comment at the top of an imported topology: where it came from, what to set, what is out.

A reviewer reading the pull request that adds the imported file sees, without running anything,
which environment variables hold the secrets and which MM2 properties did not make it across.
"""

from topology.core.diagnostics import one_line
from topology.core.mm2.import_context import brief
from topology.core.mm2.importer import ImportResult

_WIDTH = 96
_NAMES_LISTED = 100  # the warnings name every property; the header names the first ones


def header(result: ImportResult, source: str, command: str = "topo import mm2") -> list[str]:
    lines = [
        f"Imported from {source} by `{command}`.",
        "Check it with `topo validate`; docs/mm2.md explains how each MM2 property maps.",
    ]
    if result.env_vars:
        lines += ["", "Secrets are not in this file. Set these environment variables for topo:"]
        # One comment line each, whatever the property names hold (a line break would end
        # the comment and start YAML).
        rows = [(one_line(var.name), one_line(var.purpose)) for var in result.env_vars]
        width = max(len(name) for name, _ in rows)
        lines += [f"  {name.ljust(width)}  {purpose}" for name, purpose in rows]
    if result.notes:
        lines += ["", "Notes:"]
        for note in result.notes:
            lines += _wrapped(note, first="  - ", rest="    ")
    if result.not_imported:
        lines += ["", "Not imported (no topo equivalent, or no effect in MM2; see the warnings):"]
        names = [brief(name) for name in result.not_imported[:_NAMES_LISTED]]
        more = len(result.not_imported) - len(names)
        text = ", ".join(names) + (f" and {more} more" if more > 0 else "")
        lines += _wrapped(text, first="  ", rest="  ")
    return lines


def _wrapped(text: str, first: str, rest: str) -> list[str]:
    lines: list[str] = []
    current = first
    for word in text.split(" "):
        if len(current) + len(word) > _WIDTH and current.strip():
            lines.append(current.rstrip())
            current = rest
        current += word + " "
    lines.append(current.rstrip())
    return lines
