"""Text for `topo offsets` and `topo failover`: a group's offsets on both clusters, side by side."""

from collections.abc import Iterable, Mapping
from typing import Any


def moves_text(moves: Iterable[Mapping[str, Any]], committing: bool) -> str:
    """One block per group: each partition's committed offset where it was and where it
    resumes on the destination, with anything inexact or incomplete noted; beside it, where
    there is one, the newest checkpoint in MM2's format (what MM2's client answers). For a
    failover (`committing`), what it costs: the records the group would read again, and what
    the origin holds that is not copied yet (a failover now leaves it behind)."""
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
                *([_rereads(row), _not_copied(row)] if committing else []),
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
            *(["read again", "not copied yet"] if committing else []),
            "",
        )
        columns = len(header) - 1
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(columns)]
        for row in [header, *rows]:
            cells = [row[i].ljust(widths[i]) for i in range(columns)]
            lines.append(("  " + "  ".join(cells) + "  " + row[columns]).rstrip())
        for reason in move["refused"]:
            lines.append(f"  refused: {reason}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def commits_text(moves: Iterable[Mapping[str, Any]]) -> str:
    """One line per group committed by `topo failover`."""
    lines = []
    for move in moves:
        if move["committed"]:
            count = len([r for r in move["partitions"] if r["position"] is not None])
            lines.append(f"committed {count} offset(s) for {move['group']} on {move['to']}")
    return "\n".join(lines) + "\n"


def _rereads(row: Mapping[str, Any]) -> str:
    """Records the group would read again: 0 where exact, a bound where not, ? unknown."""
    count = row.get("rereads")
    if row["position"] is None:
        return "-"
    if count is None:
        return "?"
    return str(count) if row["exact"] else f"<= {count}"


def _not_copied(row: Mapping[str, Any]) -> str:
    """What the origin holds of the partition that the flow has not copied yet: records, and
    how old the oldest is (what a failover now would leave behind)."""
    found = row.get("not_copied")
    if found is None:
        return "-"
    if not found["records"]:
        return "0"
    seconds = found["seconds"]
    return f"{found['records']}" + ("" if seconds is None else f" ({_seconds(seconds)})")


def _seconds(value: float) -> str:
    whole = int(value)
    if whole < 120:
        return f"{value:.1f} s" if value < 10 else f"{whole} s"
    return f"{whole // 60} min" if whole < 7200 else f"{whole // 3600} h"


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
