"""Saved plans (`topo plan -o PLAN.json`): recognised, checked against their schema, read back.

Pure: takes the file's text. A saved plan that is not one topo wrote (hand-edited, truncated,
from a future format) is refused with one line saying what is wrong, never half-applied.
"""

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from topology.errors import TopoError
from topology.plan.model import FORMAT_VERSION, Plan, plan_from_dict


class SavedPlanError(TopoError):
    """A saved plan file that cannot be applied as it is."""


@cache
def _validator() -> Draft202012Validator:
    text = resources.files("topology").joinpath("resources/schemas/plan.schema.json")
    return Draft202012Validator(json.loads(text.read_text(encoding="utf-8")))


def looks_like_plan(text: str) -> bool:
    """True for a JSON object with a `format_version` and `changes`: a plan, not a topology."""
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and "format_version" in data and "changes" in data


def read(text: str, file: str) -> Plan:
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
