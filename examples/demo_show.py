"""Read the quickstart's copies back from west and check them against their sources on east.

Run by `make demo` after the traffic stopped. It waits (up to a minute) until every record of
`orders` on east has its copy in `east.orders` on west, prints the newest few copies, and
checks every one: same partition, key, value and headers, plus the headers topo adds (asked
of topo's own reference, `topology.core.jobs.copied_headers`, so the check cannot drift from the
engine), and the source record's timestamp (not the time it was copied).
"""

import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from topology.core import jobs
from topology.core.analysis import analyse
from topology.kafka import records
from topology.kafka.records import Record
from topology.lab import manager

QUICKSTART = Path(__file__).with_name("quickstart.yaml")
SOURCE, TARGET = "orders", "east.orders"
SHOWN = 4
WAIT = 60.0

Content = tuple[int, bytes | None, bytes | None, tuple[jobs.Header, ...], int | None]


def quickstart_job() -> jobs.JobSpec:
    """The east->west job of the quickstart, as `topo apply` runs it."""
    analysis = analyse(QUICKSTART.read_text(), str(QUICKSTART))
    assert analysis.topology is not None, "examples/quickstart.yaml does not validate"
    return next(s for s in jobs.specs_of(analysis.topology) if s.flow == "east->west")


def expected_copy(job: jobs.JobSpec, source: Record) -> Content:
    """What the copy of `source` must hold on west: its partition, key, value and timestamp,
    and its headers followed by the ones topo adds."""
    assert source.offset is not None
    headers = jobs.copied_headers(job, source.headers, source.offset)
    return (source.partition, source.key, source.value, headers, source.timestamp_ms)


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
    job = quickstart_job()
    east, west = manager.admin_config("east"), manager.admin_config("west")
    deadline = time.monotonic() + WAIT
    while True:
        sources = records.read_topic(east, SOURCE)
        copies = {copy.content(): copy for copy in records.read_topic(west, TARGET)}
        missing = [r for r in sources if expected_copy(job, r) not in copies]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(2)
    source_of = {expected_copy(job, r): r for r in sources}
    faithful = [copy for content, copy in copies.items() if content in source_of]
    newest = sorted(faithful, key=lambda r: (r.timestamp_ms or 0, r.partition))[-SHOWN:]
    print(f"west/{TARGET}: the {len(newest)} newest of {len(faithful)} copied records")
    for copy in newest:
        show(copy, source_of.get(copy.content()))
    if missing:
        first = missing[0]
        added = ", ".join(name for name, _ in jobs.copied_headers(job, (), 0))
        print(
            f"PROBLEM: of {len(sources)} records on east/{SOURCE}, {len(missing)} have no "
            f"faithful copy on west/{TARGET} (the first: partition {first.partition}, offset "
            f"{first.offset}); a copy keeps the partition, key, value, headers and timestamp, "
            f"and adds {added}",
            file=sys.stderr,
        )
        return 1
    print(
        f"OK: all {len(sources)} records of east/{SOURCE} are on west/{TARGET} with the same "
        "partition, key, value, headers (+ topo's provenance and offsets stamps) and timestamp"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
