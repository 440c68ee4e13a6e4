"""Saved plans (`topo plan -o PLAN.json`): recognised, checked against their schema, read back.

Pure: takes the file's text. A saved plan that is not one topo wrote (hand-edited, truncated,
from a future format) is refused with one line saying what is wrong, never half-applied.
"""

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from topology.errors import TopoError
from topology.plan.model import FORMAT_VERSION, Plan, plan_from_dict


class SavedPlanError(TopoError):
    """A saved plan file that cannot be applied as it is."""


# topo's plans nest fewer than 10 levels. A deeper file is refused before json.loads, which
# raises RecursionError near 1,000 levels (and everything after it would recurse as deep).
MAX_DEPTH = 100
# A JSON string (skipped whole, so brackets inside one do not count) or a bracket. The closing
# quote is optional: an unclosed string then runs to the end of the text in one match, instead
# of being tried again from every quote after it (quadratic on a file full of \").
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


@cache
def _validator() -> Draft202012Validator:
    text = resources.files("topology").joinpath("resources/schemas/plan.schema.json")
    return Draft202012Validator(json.loads(text.read_text(encoding="utf-8")))


def looks_like_plan(text: str) -> bool:
    """True for a JSON object with a `format_version` and `changes`: a plan, not a topology."""
    if _too_deep(text) is not None:  # not loaded; `read` says where, if it claims to be a plan
        return text.lstrip().startswith("{") and '"format_version"' in text
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and "format_version" in data and "changes" in data


def read(text: str, file: str) -> Plan:
    deep = _too_deep(text)
    if deep is not None:
        line, column = deep
        raise SavedPlanError(
            f"{file}:{line}:{column}: not a plan topo wrote: values nest more than {MAX_DEPTH} "
            "levels deep here"
        )
    data: Any = json.loads(text)
    version = data.get("format_version") if isinstance(data, dict) else None
    if version != FORMAT_VERSION:
        raise SavedPlanError(
            f"{file}: plan format {version!r} is not the {FORMAT_VERSION!r} this topo applies"
        )
    problem = best_match(_validator().iter_errors(data))
    if problem is not None:
        where = "/".join(str(part) for part in problem.absolute_path) or "the top level"
        raise SavedPlanError(f"{file}: not a plan topo wrote: at {where}: {problem.message}")
    return plan_from_dict(data)


def _too_deep(text: str) -> tuple[int, int] | None:
    """The line and column of the first bracket that opens level MAX_DEPTH + 1, if any."""
    depth = 0
    for found in _STRING_OR_BRACKET.finditer(text):
        bracket = found.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                at = found.start()
                return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        elif bracket in ("]", "}"):
            depth = max(0, depth - 1)
    return None
