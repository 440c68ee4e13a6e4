"""A plan for the terminal, in the spirit of `terraform plan`.

Reads only the plan document (`Plan.to_dict()`, schemas/plan.schema.json), the same JSON that
`--format json` prints and apply executes, so what a reviewer reads is what runs. The helpers
shared with the markdown renderer (ordering, summary, values) live here too.
"""

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from topology.core.observed import Acl

SIGN = {"create": "+", "update": "~", "delete": "-", "replace": "-/+"}
_LEGEND = {
    "create": "create",
    "update": "update in place",
    "delete": "delete",
    "replace": "replace (delete, then create)",
}
ARROW = "→"
DEFAULT = "(default)"  # a config set to null: not set on the topic, the cluster's default applies
_TOPIC_FIELDS = ("partitions", "replication_factor", "purpose", "sources")

Doc = Mapping[str, Any]


def render(plan: Doc) -> str:
    """`topo plan --format text`: legend, changes by cluster, notes, then the summary line."""
    changes: list[Doc] = plan["changes"]
    lines: list[str] = []
    if changes:
        used = [action for action in SIGN if any(c["action"] == action for c in changes)]
        lines += ["topo will make these changes. Symbols:"]
        width = max(len(SIGN[action]) for action in used)
        lines += [f"  {SIGN[action]:>{width}} {_LEGEND[action]}" for action in used]
        lines.append("")
        deleted = [f"{c['cluster']}/{c['name']}" for c in changes if deletes_data(c)]
        if deleted:
            them = "it" if len(deleted) == 1 else "them"
            count = counted(len(deleted), "topic")
            names = ", ".join(deleted)
            lines += [f"! This plan deletes {count} and every record in {them}: {names}", ""]
    for cluster, group in by_cluster(plan):
        bootstrap = plan["clusters"].get(cluster, {}).get("bootstrap")
        lines += [f"On {cluster}{f' ({bootstrap})' if bootstrap else ''}:", ""]
        for change in group:
            lines += [*_change_block(change), ""]
    notes = sorted_notes(plan)
    if notes:
        width = max(len(note["level"]) for note in notes) + 1
        lines.append("Notes:")
        for note in notes:
            head = f"  {note['level'] + ':':<{width}} "
            where = note_location(note)
            text = f"{where}: {note['message']}" if where else note["message"]
            first, *rest = text.splitlines() or [""]
            lines += [head + first, *(" " * len(head) + line for line in rest)]
        lines.append("")
    lines += _jobs(plan.get("jobs"))
    if changes:
        lines.append(f"Plan: {summary_text(plan['summary'])}.")
    else:
        lines.append("No changes. The clusters match the topology.")
    return "\n".join(lines) + "\n"


def _jobs(jobs: list[Doc] | None) -> list[str]:
    """`--show-jobs`: each flow's job, its rules and the topics it copies now."""
    if jobs is None:
        return []
    lines = ["Replication jobs:", ""]
    for job in jobs:
        lines.append(f"  job {job['flow']} ({job['digest'][:19]})")
        rules = [
            (" ", key, job_value(job[key]))
            for key in job
            if key not in (*JOB_IDENTITY, "digest", "topics_now")
        ]
        lines += ["      " + line for line in _aligned(rules)]
        copied = job["topics_now"]
        lines.append(f"      copies now: {counted(len(copied), 'topic')}")
        lines += [f"        {source} {ARROW} {remote}" for source, remote in copied.items()]
        lines.append("")
    return lines


def summary_text(summary: Mapping[str, int]) -> str:
    """`3 to create, 1 to update, 0 to delete`, and the replaces only when there are any."""
    text = f"{summary['create']} to create, {summary['update']} to update, "
    text += f"{summary['delete']} to delete"
    if summary.get("replace"):
        text += f", {summary['replace']} to replace"
    return text


def by_cluster(plan: Doc) -> Iterator[tuple[str, list[Doc]]]:
    """Changes grouped by cluster: the plan's clusters in their (sorted) order, then any other
    cluster a change names; within a cluster, the plan's order, which is apply's."""
    order = dict.fromkeys([*plan["clusters"], *(c["cluster"] for c in plan["changes"])])
    for cluster in order:
        group = [c for c in plan["changes"] if c["cluster"] == cluster]
        if group:
            yield cluster, group


def sorted_notes(plan: Doc) -> list[Doc]:
    """Warnings first, then the rest, each in the plan's order."""
    notes: list[Doc] = plan["notes"]
    return sorted(notes, key=lambda note: note["level"] != "warning")


def note_location(note: Doc) -> str:
    """`west/east.orders`, or whichever of the two the note names."""
    return "/".join(part for part in (note["cluster"], note["name"]) if part)


# What a job's title already says: its edge.
JOB_IDENTITY = ("flow", "source", "target")


def deletes_data(change: Doc) -> bool:
    """A topic delete, or the delete half of a topic replace: its records are gone."""
    return change["resource"] == "topic" and change["action"] in ("delete", "replace")


def value(item: Any) -> str:
    """A value as people read it: strings quoted, null as the cluster's default."""
    if item is None:
        return DEFAULT
    if isinstance(item, str | bool | list | dict):
        return json.dumps(item, ensure_ascii=False)
    return str(item)


def job_value(item: Any) -> str:
    """A job setting: null is "none" (no filter), not a cluster default."""
    return "none" if item is None else value(item)


def acl_line(acl: Mapping[str, str]) -> str:
    """ALLOW User:alice READ on TOPIC east.orders (literal) from *"""
    return Acl(**acl).describe()


def title(change: Doc) -> str:
    """What a change is about, after its sign: `topic east.orders`, `acl ALLOW ...`."""
    resource, name = change["resource"], change["name"]
    if resource == "acl":
        return f"acl {acl_line(change.get('after') or change['before'])}"
    return {
        "topic": f"topic {name}",
        "partitions": f"partitions of topic {name}",
        "topic_config": f"configs of topic {name}",
        "ownership": f"ownership record of topic {name}",
        "flow": f"replication job {name}",
    }.get(resource, f"{resource} {name}")


def _change_block(change: Doc) -> list[str]:
    indent = "      "
    lines = []
    if deletes_data(change):
        verb = "DELETES" if change["action"] == "delete" else "REPLACES"
        where = f"topic {change['name']} on {change['cluster']}"
        lines.append(f"  ! {verb} {where}: every record in it is deleted")
    lines.append(f"  {SIGN[change['action']]} {title(change)}")
    lines += [f"{indent}# {line}" for line in change["reason"].splitlines()]
    return lines + [indent + line for line in _attributes(change)]


def _attributes(change: Doc) -> list[str]:
    """The attribute lines under a change: `~ retention.ms: "1000" → "2000"`."""
    action, resource = change["action"], change["resource"]
    before: Doc = change.get("before") or {}
    after: Doc = change.get("after") or {}
    if resource == "acl" and action in ("create", "delete"):
        return []  # the title is the whole binding
    if resource == "topic_config":
        return _aligned(_config_rows(before, after))
    if resource == "flow":
        resumed = after.get("resume")
        lines = _aligned(_job_rows(before, after, action))
        return lines + (resume_lines(resumed) if resumed else [])
    if resource == "topic" and action in ("create", "delete"):
        sign = SIGN[action]
        fields = after or before
        rows = [(sign, key, value(fields[key])) for key in _TOPIC_FIELDS if key in fields]
        configs: Doc = fields.get("configs", {})
        if not configs:
            return _aligned([*rows, (sign, "configs", "{}")])
        nested = _aligned([(sign, key, value(configs[key])) for key in sorted(configs)])
        return [*_aligned([*rows, (sign, "configs", "")]), *("    " + line for line in nested)]
    return _aligned(_generic_rows(before, after, action))


def _config_rows(before: Doc, after: Doc) -> list[tuple[str, str, str]]:
    rows = []
    for key in sorted({*before, *after}):
        old, new = before.get(key), after.get(key)
        if old is None and new is not None:
            rows.append(("+", key, value(new)))
        elif new is None and old is not None:
            rows.append(("-", key, f"{value(old)} {ARROW} {DEFAULT}"))
        else:
            rows.append(("~", key, f"{value(old)} {ARROW} {value(new)}"))
    return rows


def _generic_rows(before: Doc, after: Doc, action: str) -> list[tuple[str, str, str]]:
    """Any other shape, key by key: `+` only after, `-` only before, `~` old → new."""
    if action == "create":
        return [("+", key, value(after[key])) for key in after]
    if action == "delete":
        return [("-", key, value(before[key])) for key in before]
    rows = []
    for key in dict.fromkeys([*before, *after]):
        if key not in before:
            rows.append(("+", key, value(after[key])))
        elif key not in after:
            rows.append(("-", key, value(before[key])))
        elif before[key] == after[key]:
            rows.append((" ", key, value(after[key])))
        else:
            rows.append(("~", key, f"{value(before[key])} {ARROW} {value(after[key])}"))
    return rows


# What a job's create shows in text and markdown: its rules and settings. The engine and the
# clusters' connections are the topology's own, alike for every job (the JSON plan has them),
# and where MM2 keeps its state matters only to a flow that takes over from it; a restart shows
# every one of their values that changed.
JOB_SHOWN_ON_UPDATE_ONLY = ("engine", "clusters")


def job_changes(before: Doc, after: Doc, action: str) -> list[tuple[str, Any, Any]]:
    """(setting, before, after) for each job setting a change shows: on a create every rule
    and setting, on a restart each value that changed, nested ones by their dotted path
    (`engine.metrics.port`)."""
    if action == "delete":
        return []
    shown = [key for key in after if key not in (*JOB_IDENTITY, "resume")]
    if action == "create":
        hidden = JOB_SHOWN_ON_UPDATE_ONLY + (("mm2",) if after.get("start") != "mm2" else ())
        return [(key, None, after[key]) for key in shown if key not in hidden]
    old, new = _flat(before), _flat({key: after[key] for key in shown})
    return [
        (key, old.get(key), new.get(key))
        for key in dict.fromkeys([*new, *old])
        if old.get(key) != new.get(key) and key.split(".")[0] not in JOB_IDENTITY
    ]


def _flat(values: Doc, prefix: str = "") -> dict[str, Any]:
    """Nested objects as dotted keys; lists and other values as they are."""
    found: dict[str, Any] = {}
    for key, item in values.items():
        if key == "resume":
            continue
        if isinstance(item, Mapping) and item and key not in ("topics", "groups"):
            found.update(_flat(item, f"{prefix}{key}."))
        else:
            found[f"{prefix}{key}"] = item
    return found


def _job_rows(before: Doc, after: Doc, action: str) -> list[tuple[str, str, str]]:
    """A job's rules; for a restart only those that changed (the title names the edge)."""
    rows = job_changes(before, after, action)
    if action == "create":
        return [("+", key, job_value(new)) for key, _old, new in rows]
    return [("~", key, f"{job_value(old)} {ARROW} {job_value(new)}") for key, old, new in rows]


def resume_lines(resume: Doc) -> list[str]:
    """Where a flow taking over from MM2 starts each partition, and what waits there."""
    lines = [
        f"resumes where MirrorMaker 2 stopped (its positions in {resume['offsets_topic']}), "
        f"{counted(resume['waiting'], 'record')} waiting (or, if topo copied since, from "
        "where it committed):"
    ]
    for item in resume["partitions"]:
        where = f"{item['topic']}[{item['partition']}]"
        if item["offset"] is None:
            lines.append(f"  {where} from its earliest offset (MM2 copied none of it)")
        else:
            waiting = "" if item["waiting"] is None else f", {item['waiting']:,} waiting"
            lines.append(f"  {where} from offset {item['offset']:,}{waiting}")
    return lines


def _aligned(rows: Sequence[tuple[str, str, str]]) -> list[str]:
    """`+ key:   value` rows with the values lined up, as terraform lines up its `=`."""
    if not rows:
        return []
    width = max(len(key) for _sign, key, _value in rows) + 1
    return [f"{sign} {key + ':':<{width}} {text}".rstrip() for sign, key, text in rows]


def counted(number: int, noun: str) -> str:
    """`1 topic`, `2 topics`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
