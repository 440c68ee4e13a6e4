"""Text for `topo reset`: each partition's position now and after, and what the move costs."""

import datetime
from collections.abc import Mapping
from typing import Any


def reset_text(document: Mapping[str, Any]) -> str:
    """A table of the partitions (topic, partition, now, after, what it costs), then the sum:
    how many positions change, the records copied again and those never copied."""
    rows = [
        (
            str(row["topic"]),
            str(row["partition"]),
            "-" if row["before"] is None else str(row["before"]),
            str(row["after"]),
            _cost(row),
            "" if row["note"] is None else f"({row['note']})",
        )
        for row in document["partitions"]
    ]
    header = ("topic", "partition", "now", "after", "", "")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    lines = [
        f"Reset of {document['flow']} ({document['delivery']}) to {_to(document['to'])}: its "
        f"positions in group {document['group']} on {document['target']}",
        "",
    ]
    for row in [header, *rows]:
        cells = [row[i].ljust(widths[i]) for i in range(5)]
        lines.append(("  " + "  ".join(cells) + "  " + row[5]).rstrip())
    lines.append("")
    changed = document["changed"]
    if not changed:
        lines.append("Nothing to move: every position is already there.")
    else:
        lines.append(
            f"{changed} position(s) move: {document['again']} record(s) copied again, "
            f"{document['skipped']} never copied."
        )
        if document["again"] and document["delivery"] == "exactly-once":
            lines.append(
                f"Records copied again are written to {document['target']} a second time: "
                "exactly-once holds within a run of positions, not across a reset."
            )
    return "\n".join(lines) + "\n"


def _cost(row: Mapping[str, Any]) -> str:
    if row["again"]:
        return f"{row['again']} copied again"
    if row["skipped"]:
        return f"{row['skipped']} never copied"
    return "no change" if row["before"] == row["after"] else ""


def _to(to: Mapping[str, Any]) -> str:
    if to["kind"] == "time":
        when = datetime.datetime.fromtimestamp(to["value"] / 1000, tz=datetime.UTC)
        return when.isoformat().replace("+00:00", "Z")
    return str(to["value"]) if to["kind"] == "offset" else str(to["kind"])
