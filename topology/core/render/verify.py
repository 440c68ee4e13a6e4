"""Text for `topo verify`: one line per partition, the first difference named, a summary."""

from collections.abc import Iterable, Mapping
from typing import Any


def proofs_text(proofs: Iterable[Mapping[str, Any]]) -> str:
    lines: list[str] = []
    flow = None
    counts: dict[str, int] = {}
    for proof in proofs:
        if proof["flow"] != flow:
            flow = proof["flow"]
            lines.append(f"{'' if not lines else chr(10)}flow {flow}")
        counts[proof["verdict"]] = counts.get(proof["verdict"], 0) + 1
        where = f"{proof['topic']} [{proof['partition']}] -> {proof['target_topic']}"
        lines.append(f"  {where:<40} {proof['verdict']:<8} {_detail(proof)}".rstrip())
    total = sum(counts.values())
    said = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    lines.append(f"\n{total} partition(s): {said}.")
    return "\n".join(lines) + "\n"


def _detail(proof: Mapping[str, Any]) -> str:
    if proof["error"] is not None:
        return str(proof["error"])
    window = proof["window"]
    parts = [
        f"{proof['source']['records']} record(s), source offsets {window['start']}..{window['end']}"
    ]
    first = proof["first_difference"]
    if first is not None:
        at = "" if first["target_offset"] is None else f" (target offset {first['target_offset']})"
        parts = [
            f"first at source offset {first['source_offset']}{at}: {first['kind']}, "
            f"{first['detail']}; {proof['differences']} difference(s)"
        ]
    if proof["not_copied"]:
        parts.append(f"{proof['not_copied']} not copied yet")
    if proof["compacted"]:
        parts.append("compacted")
    return "; ".join(parts)
