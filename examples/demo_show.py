"""Read the quickstart's copies back from west and check them against their sources on east.

Run by `make demo` after the traffic stopped. It waits (up to a minute) until every record of
`orders` on east has its copy in `east.orders` on west, prints the newest few copies, and
checks every one: same partition, key, value and headers, plus `topo-provenance: east`, and
the source record's timestamp (not the time it was copied).
"""

import sys
import time
from datetime import UTC, datetime

from topology.kafka import records
from topology.kafka.records import Record
from topology.lab import manager

SOURCE, TARGET = "orders", "east.orders"
PROVENANCE = ("topo-provenance", b"east")
SHOWN = 4
WAIT = 60.0


def identity(record: Record) -> tuple[object, ...]:
    """What tells records apart (the demo writes the same orders on every run, with the run in
    a header): partition, key, value and the source's headers."""
    headers = tuple(h for h in record.headers if h != PROVENANCE)
    return (record.partition, record.key, record.value, headers)


def faithful(copy: Record, source: Record) -> bool:
    """The copy has its source's partition, key, value, headers and timestamp, plus
    `topo-provenance: east` as the last header."""
    return copy.content() == (*source.content()[:3], (*source.headers, PROVENANCE),
                              source.timestamp_ms)  # fmt: skip


def when(millis: int | None) -> str:
    if millis is None:
        return "-"
    return datetime.fromtimestamp(millis / 1000, UTC).isoformat(timespec="milliseconds")


def show(copy: Record, source: Record | None) -> None:
    heads = ", ".join(f"{k}={'null' if v is None else v.decode()}" for k, v in copy.headers)
    stamp = when(copy.timestamp_ms)
    if source is not None and source.timestamp_ms == copy.timestamp_ms:
        stamp += "  (the source record's, kept)"
    else:
        stamp += f"  (DIFFERS: the source record's is {when(source and source.timestamp_ms)})"
    print(f"  partition {copy.partition}  offset {copy.offset}  key {(copy.key or b'').decode()}")
    print(f"    value      {(copy.value or b'(null)').decode()}")
    print(f"    headers    {heads}")
    print(f"    timestamp  {stamp}")


def main() -> int:
    east, west = manager.admin_config("east"), manager.admin_config("west")
    deadline = time.monotonic() + WAIT
    while True:
        source = records.read_topic(east, SOURCE)
        copied = records.read_topic(west, TARGET)
        copies = {identity(r): r for r in copied if PROVENANCE in r.headers}
        missing = [r for r in source if identity(r) not in copies]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(2)
    newest = sorted(copies.values(), key=lambda r: (r.timestamp_ms or 0, r.partition))[-SHOWN:]
    by_identity = {identity(r): r for r in source}
    print(f"west/{TARGET}: the {len(newest)} newest of {len(copies)} copied records")
    for copy in newest:
        show(copy, by_identity.get(identity(copy)))
    wrong = [r for r in source if identity(r) in copies and not faithful(copies[identity(r)], r)]
    if missing or wrong:
        print(f"PROBLEM: of {len(source)} records on east/{SOURCE}, {len(missing)} have no copy "
              f"on west and {len(wrong)} differ from theirs", file=sys.stderr)  # fmt: skip
        return 1
    print(
        f"OK: all {len(source)} records of east/{SOURCE} are on west/{TARGET} with the same "
        "partition, key, value, headers (+ topo-provenance) and timestamp"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
