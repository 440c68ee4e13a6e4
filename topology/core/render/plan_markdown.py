"""A plan as a pull-request comment (GitHub-flavoured markdown).

Reads only the plan document, like the text renderer, and shares its ordering and wording; only
the layout differs: a table per cluster, deletes in a warning callout, the fingerprint folded away.
"""

import re
from collections.abc import Mapping
from typing import Any

from topology.core.render.plan_text import (
    ARROW,
    DEFAULT,
    SIGN,
    acl_line,
    by_cluster,
    counted,
    deletes_data,
    job_changes,
    note_location,
    sorted_notes,
    summary_text,
    value,
)

Doc = Mapping[str, Any]

_RESOURCE = {
    "topic": "topic",
    "partitions": "partitions",
    "topic_config": "configs",
    "acl": "acl",
    "ownership": "ownership record",
    "flow": "replication job",
}
# ASCII punctuation that starts inline markdown (emphasis, code, links, HTML, entities, strike).
# `|` is left to `_cell`: inside a table it needs a backslash even within a code span, and
# outside one the backslash would show.
_INLINE = re.compile(r"([\\`*_\[\]<&~])")


def render(plan: Doc) -> str:
    """`topo plan --format markdown`: summary heading, deletes callout, a table per cluster,
    notes, and the fingerprint in a `<details>` block."""
    changes: list[Doc] = plan["changes"]
    if changes:
        lines = [f"### topo plan: {summary_text(plan['summary'])}", ""]
    else:
        lines = ["### topo plan: no changes", "", "The clusters match the topology.", ""]
    lines += _deletes_callout(changes, plan["allow_delete"])
    for cluster, group in by_cluster(plan):
        bootstrap = plan["clusters"].get(cluster, {}).get("bootstrap")
        heading = f"#### {_code(cluster)}" + (f" ({_code(bootstrap)})" if bootstrap else "")
        lines += [heading, "", "| | Resource | Name | Change | Reason |", "|---|---|---|---|---|"]
        for change in group:
            cells = [
                SIGN[change["action"]],
                _resource(change),
                _code(change["name"]),
                _change_cell(change),
                _text(change["reason"]),
            ]
            lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
        lines.append("")
    notes = sorted_notes(plan)
    if notes:
        lines += ["#### Notes", ""]
        for note in notes:
            level = "**warning**" if note["level"] == "warning" else note["level"]
            where = note_location(note)
            lines.append(
                f"- {level} " + (f"{_code(where)}: " if where else "") + _text(note["message"])
            )
        lines.append("")
    return "\n".join([*lines, *_details(plan)]) + "\n"


def _deletes_callout(changes: list[Doc], allow_delete: bool) -> list[str]:
    deletes = [c for c in changes if c["action"] == "delete" or deletes_data(c)]
    if not deletes:
        return []
    topics = sum(1 for c in deletes if deletes_data(c))
    them = "it" if topics == 1 else "them"
    if topics == len(deletes):
        headline = f"**This plan deletes {counted(topics, 'topic')} and every record in {them}.**"
    elif topics:
        headline = f"**This plan deletes {counted(len(deletes), 'resource')}**, "
        headline += f"{topics} of them {'a topic' if topics == 1 else 'topics'} "
        headline += f"with every record in {them}."
    else:
        headline = f"**This plan deletes {counted(len(deletes), 'resource')}.**"
    if topics and allow_delete:
        headline += " Topic deletes are allowed: this plan was made with `--allow-delete`."
    lines = ["> [!WARNING]", f"> {headline}", ">"]
    for change in deletes:
        what = f"{_resource(change)} "
        if change["resource"] == "acl":
            what += _code(acl_line(change["before"]))
        else:
            what += _code(change["name"])
        what += f" on {_code(change['cluster'])}"
        if deletes_data(change):
            replaced = "" if change["action"] == "delete" else ", replaced by an empty one"
            what = f"**{what}, with every record in it{replaced}**"
        lines.append(f"> - {what}: {_text(change['reason'])}")
    return [*lines, ""]


def _resource(change: Doc) -> str:
    resource: str = change["resource"]
    return _RESOURCE.get(resource, resource)


def _change_cell(change: Doc) -> str:
    action, resource = change["action"], change["resource"]
    before: Doc = change.get("before") or {}
    after: Doc = change.get("after") or {}
    if resource == "acl" and action in ("create", "delete"):
        return _code(acl_line(after or before))
    if resource == "topic" and action == "create":
        sources = ", ".join(_code(source) for source in after["sources"])
        text = after["purpose"] + (f" from {sources}" if sources else "") + "; "
        text += _topic_size(after)
        configs: Doc = after["configs"]
        rows = [f"{_code(key)}: {_code(value(configs[key]))}" for key in sorted(configs)]
        return "<br>".join([text, *rows])
    if resource == "topic" and action == "delete":
        return f"**deleted, with every record in it** ({_topic_size(before)})"
    if resource == "partitions":
        return f"{before['partitions']} {ARROW} {after['partitions']}"
    if resource == "flow":
        return _job_cell(before, after, action)
    if resource == "ownership":
        edges = [_edges(before["edges"])] if before else []
        edges += [_edges(after["edges"])] if after else []
        return f"edges {f' {ARROW} '.join(edges)}"
    keys = sorted({*before, *after}) if resource == "topic_config" else [*{**before, **after}]
    return "<br>".join(
        f"{_code(key)}: {_old_new(before.get(key), after.get(key), key in before, key in after)}"
        for key in keys
    )


def _job_cell(before: Doc, after: Doc, action: str) -> str:
    if action == "delete":
        return "stopped"
    rows = [
        f"{_code(key)}: {_old_new(old, new, action != 'create', True)}"
        for key, old, new in job_changes(before, after, action)
    ]
    resumed = after.get("resume")
    if resumed:
        copied = sum(1 for item in resumed["partitions"] if item["offset"] is not None)
        rows.append(
            f"resumes where MirrorMaker 2 stopped: {copied} of "
            f"{len(resumed['partitions'])} partition(s) from MM2's positions, "
            f"{resumed['waiting']:,} record(s) waiting"
        )
    return "<br>".join(rows)


def _old_new(old: Any, new: Any, had: bool, has: bool) -> str:
    """`"1000"` → `"2000"`; a config absent or null is the cluster's default."""
    if old == new and had and has:
        return f"{_shown(new)} (unchanged)"
    return f"{_shown(old) if had else '(none)'} {ARROW} {_shown(new) if has else '(none)'}"


def _shown(item: Any) -> str:
    return DEFAULT if item is None else _code(value(item))


def _topic_size(topic: Doc) -> str:
    partitions = counted(topic["partitions"], "partition")
    return f"{partitions}, replication factor {topic['replication_factor']}"


def _edges(edges: list[str]) -> str:
    return ", ".join(_code(edge) for edge in edges) or "(none)"


def _details(plan: Doc) -> list[str]:
    topology = plan["topology"]
    clusters = ", ".join(
        f"{_code(name)} ({_code(cluster['bootstrap'])})"
        for name, cluster in plan["clusters"].items()
    )
    lines = [
        "<details><summary>Plan fingerprint</summary>",
        "",
        f"- Fingerprint: {_code(plan['fingerprint'])}",
        f"- Topology: {_code(topology['file'])}, sha256 {_code(topology['sha256'])}",
        f"- Clusters: {clusters or '(none)'}",
        f"- Deletes allowed (`--allow-delete`): {'yes' if plan['allow_delete'] else 'no'}",
    ]
    if plan["topo_version"]:
        lines.append(f"- topo {_text(plan['topo_version'])}")
    return [*lines, "", "</details>"]


def _code(text: str) -> str:
    """A code span that survives backticks in `text`: a longer fence, padded when needed."""
    text = " ".join(text.splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if (
        text.startswith("`")
        or text.endswith("`")
        or (text[:1] == text[-1:] == " " and text.strip())
    ):
        text = f" {text} "
    return f"{fence}{text}{fence}"


def _text(text: str) -> str:
    """Free text (reasons, messages) on one line, with markdown's inline syntax escaped."""
    return _INLINE.sub(r"\\\1", " ".join(text.splitlines()))


def _cell(text: str) -> str:
    """GitHub splits table rows at every unescaped `|`, code spans included."""
    return text.replace("|", "\\|")
