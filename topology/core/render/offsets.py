"""Text for `topo offsets` and `topo failover`: a group's offsets on both clusters, side by side."""

from collections.abc import Iterable, Mapping
from typing import Any


def moves_text(moves: Iterable[Mapping[str, Any]], committing: bool) -> str:
    """One block per group: each partition's committed offset where it was and where it
    resumes (or resumed) on the destination, with anything inexact or incomplete noted; beside
    it, where there is one, the newest checkpoint in MM2's format (what MM2's client answers)."""
    lines: list[str] = []
    for move in moves:
        head = f"group {move['group']}: {move['from']} -> {move['to']}"
        if move["basis"] == "checkpoints":
            head += f" (from checkpoints: {move['from']} cannot be reached)"
        lines.append(head)
        mm2 = any(row.get("mm2_checkpoint") is not None for row in move["partitions"])
        rows = [
            (
                f"{row['topic']} [{row['partition']}]",
                str(row["offset"]),
                f"{row['destination_topic'] or '-'} [{row['partition']}]",
                "-" if row["position"] is None else str(row["position"]),
                "-" if row["current"] is None else str(row["current"]),
                *([_or_dash(row.get("mm2_checkpoint"))] if mm2 else []),
                _remark(row),
            )
            for row in move["partitions"]
        ]
        header = (
            f"on {move['from']}",
            "offset",
            f"on {move['to']}",
            "translated",
            "there now",
            *(["MM2 checkpoint"] if mm2 else []),
            "",
        )
        columns = len(header) - 1
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(columns)]
        for row in [header, *rows]:
            cells = [row[i].ljust(widths[i]) for i in range(columns)]
            lines.append(("  " + "  ".join(cells) + "  " + row[columns]).rstrip())
        for reason in move["refused"]:
            lines.append(f"  refused: {reason}")
        if committing and move["committed"]:
            count = len([r for r in move["partitions"] if r["position"] is not None])
            lines.append(f"  committed {count} offset(s) for {move['group']} on {move['to']}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _remark(row: Mapping[str, Any]) -> str:
    remarks = []
    if not row["exact"]:
        remarks.append("not exact")
    if not row["replicated"]:
        remarks.append("not replicated yet")
    if row.get("note") and (not row["exact"] or not row["replicated"] or row["position"] is None):
        remarks.append(row["note"])
    return "; ".join(remarks)
