"""Text for `topo offsets` and `topo failover`: a group's offsets on both clusters, side by side."""

from collections.abc import Iterable, Mapping
from typing import Any


def moves_text(moves: Iterable[Mapping[str, Any]], committing: bool) -> str:
    """One block per group: each partition's committed offset where it was and where it
    resumes (or resumed) on the destination, with anything inexact or incomplete noted."""
    lines: list[str] = []
    for move in moves:
        head = f"group {move['group']}: {move['from']} -> {move['to']}"
        if move["basis"] == "checkpoints":
            head += f" (from checkpoints: {move['from']} cannot be reached)"
        lines.append(head)
        rows = [
            (
                f"{row['topic']} [{row['partition']}]",
                str(row["offset"]),
                f"{row['destination_topic'] or '-'} [{row['partition']}]",
                "-" if row["position"] is None else str(row["position"]),
                "-" if row["current"] is None else str(row["current"]),
                _remark(row),
            )
            for row in move["partitions"]
        ]
        header = (f"on {move['from']}", "offset", f"on {move['to']}", "translated", "there now", "")
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
        for row in [header, *rows]:
            cells = [row[i].ljust(widths[i]) for i in range(5)]
            lines.append(("  " + "  ".join(cells) + "  " + row[5]).rstrip())
        for reason in move["refused"]:
            lines.append(f"  refused: {reason}")
        if committing and move["committed"]:
            count = len([r for r in move["partitions"] if r["position"] is not None])
            lines.append(f"  committed {count} offset(s) for {move['group']} on {move['to']}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _remark(row: Mapping[str, Any]) -> str:
    remarks = []
    if not row["exact"]:
        remarks.append("not exact")
    if not row["replicated"]:
        remarks.append("not replicated yet")
    if row.get("note") and (not row["exact"] or not row["replicated"] or row["position"] is None):
        remarks.append(row["note"])
    return "; ".join(remarks)
