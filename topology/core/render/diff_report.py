"""A topology diff as text (terminal), markdown (pull-request comment) or JSON.

All three read `TopologyDiff.to_dict()`, so they always agree.
"""

import json
from typing import Any

_SIGN = {"add": "+", "change": "~", "remove": "-"}
_EFFECT_NOTE = {
    "breaking": "BREAKING: new remote topics are created and the old ones stop receiving records",
    "widened": "widened: more is replicated",
    "narrowed": "narrowed: less is replicated; remote topics already created stay",
}


def as_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2)


def _change_text(change: dict[str, Any], code: str = "") -> str:
    """`topics: + include payments\\..*` for filters; `field: before -> after` otherwise."""
    before, after = change["before"], change["after"]
    if change["field"] in ("topics", "groups"):
        parts = [
            f"{sign} {key} {code}{pattern}{code}"
            for key in ("include", "exclude")
            for sign, patterns in (
                ("+", [p for p in after[key] if p not in before[key]]),
                ("-", [p for p in before[key] if p not in after[key]]),
            )
            for pattern in patterns
        ]
        return f"{change['field']}: {', '.join(parts)}"
    arrow = " → " if code else " -> "
    return f"{change['field']}: {code}{_value(before)}{code}{arrow}{code}{_value(after)}{code}"


def _value(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"include", "exclude"}:
        return f"include {json.dumps(value['include'])}, exclude {json.dumps(value['exclude'])}"
    return json.dumps(value)


def _settings_line(settings: dict[str, Any]) -> str:
    text = f"{settings['naming']} naming, topics {_value(settings['topics'])}"
    if settings.get("filter"):
        text += f", filter {json.dumps(settings['filter'])}"
    return text


def _summary_line(data: dict[str, Any]) -> str:
    s = data["summary"]
    text = f"{s['add']} to add, {s['change']} to change, {s['remove']} to remove"
    if s["breaking"]:
        text += f"; {s['breaking']} breaking"
    if s["problems_introduced"]:
        count = s["problems_introduced"]
        text += f"; {count} new problem{'s' if count != 1 else ''}"
    return text


def as_text(data: dict[str, Any]) -> str:
    lines = [f"topo diff {data['base']} -> {data['head']}", ""]
    if not data["changed"] and not data["problems_introduced"]:
        return "\n".join([*lines, "No changes. The topologies replicate the same way.", ""])
    for cluster in data["clusters"]:
        lines.append(f"  {_SIGN[cluster['action']]} cluster {cluster['cluster']}")
        for change in cluster["changes"]:
            lines.append(f"      ~ {_change_text(change)}")
    for edge in data["edges"]:
        flow = f" (flow {edge['flow']})" if edge["flow"] != edge["edge"] else ""
        lines.append(f"  {_SIGN[edge['action']]} {edge['edge']}{flow}")
        if edge["action"] != "change":
            lines.append(f"      {_settings_line(edge['settings'])}")
        for change in edge["changes"]:
            lines.append(f"      ~ {_change_text(change)}")
            if change["effect"] in _EFFECT_NOTE:
                lines.append(f"        {_EFFECT_NOTE[change['effect']]}")
    if data["topics"]:
        lines += ["", "Remote topics:"]
        for topics in data["topics"]:
            lines.append(f"  {topics['cluster']}")
            lines += [f"    + {name}" for name in topics["added"]]
            lines += [
                f"    - {name}   (orphaned: kept, no longer replicated)"
                for name in topics["removed"]
            ]
    if data["problems_introduced"]:
        lines += ["", "Problems introduced:"]
        lines += [f"  {problem}" for problem in data["problems_introduced"]]
    if data["problems_resolved"]:
        lines += ["", "Problems resolved:"]
        lines += [f"  {problem}" for problem in data["problems_resolved"]]
    return "\n".join([*lines, "", f"Summary: {_summary_line(data)}.", ""])


def as_markdown(data: dict[str, Any], mermaid: str | None) -> str:
    lines = [f"### topo diff: `{data['base']}` → `{data['head']}`", ""]
    if not data["changed"] and not data["problems_introduced"]:
        return "\n".join([*lines, "No changes: both files replicate the same way.", ""])
    lines += [f"**{_summary_line(data)}**", ""]
    breaking = [e for e in data["edges"] if e["breaking"]]
    if breaking:
        lines += [
            "> [!WARNING]",
            "> **Breaking naming changes.** topo will create new remote topics; "
            "the old ones stop receiving records and are orphaned (not deleted). "
            "Consumers of the old names must move.",
            ">",
        ]
        for edge in breaking:
            for change in edge["changes"]:
                if change["effect"] == "breaking":
                    lines.append(f"> - `{edge['edge']}`: {_change_text(change, '`')}")
        lines.append("")
    if data["problems_introduced"]:
        lines += [
            "> [!CAUTION]",
            "> **Problems this change introduces** (`topo validate` fails):",
            ">",
        ]
        lines += [f"> - `{p}`" for p in data["problems_introduced"]]
        lines.append("")
    if data["edges"]:
        lines += ["#### Replication", "", "| | Edge | Flow | Change |", "|---|---|---|---|"]
        for edge in data["edges"]:
            lines.append(
                f"| {_SIGN[edge['action']]} | `{edge['edge']}` | `{edge['flow']}` "
                f"| {_edge_cell(edge)} |"
            )
        lines.append("")
    if data["clusters"]:
        lines += ["#### Clusters", ""]
        for cluster in data["clusters"]:
            detail = "; ".join(
                f"{c['field']}: `{_value(c['before'])}` → `{_value(c['after'])}`"
                for c in cluster["changes"]
            )
            lines.append(f"- {_SIGN[cluster['action']]} **{cluster['cluster']}** {detail}".rstrip())
        lines.append("")
    if data["topics"]:
        lines += ["#### Remote topics on each cluster", ""]
        for topics in data["topics"]:
            parts = [f"+ `{n}`" for n in topics["added"]]
            parts += [f"- `{n}` (orphaned)" for n in topics["removed"]]
            lines.append(f"- **{topics['cluster']}**: {', '.join(parts)}")
        lines.append("")
    if data["problems_resolved"]:
        lines += (
            ["#### Problems resolved", ""] + [f"- `{p}`" for p in data["problems_resolved"]] + [""]
        )
    if mermaid:
        lines += [
            "<details><summary>New replication graph</summary>",
            "",
            "```mermaid",
            mermaid.rstrip(),
            "```",
            "",
            "</details>",
            "",
        ]
    return "\n".join(lines)


def _edge_cell(edge: dict[str, Any]) -> str:
    if edge["action"] != "change":
        return ("new: " if edge["action"] == "add" else "removed: ") + _settings_line(
            edge["settings"]
        ).replace("|", "\\|")
    parts = []
    for change in edge["changes"]:
        text = _change_text(change, "`")
        if change["effect"] != "changed":
            text += f" **{change['effect']}**"
        parts.append(text.replace("|", "\\|"))
    return "<br>".join(parts)
