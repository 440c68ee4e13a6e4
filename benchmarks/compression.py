"""Compression on the wire: what each codec costs and saves, topo beside MirrorMaker 2.

Run by hand, never from the test suite, on a machine where nothing else heavy runs (after
`make setup`; the first run resolves MM2's jars with mvn):

    .venv/bin/python benchmarks/compression.py [--records 200000] [--rounds 2]
        [--codecs none,lz4,snappy,gzip,zstd] [--json results.json]

The bulk copy of benchmarks/mm2.py (a backlog of `--records` values of 1 KiB in 6 partitions,
written uncompressed; the replicator started against it), with the flow's producer set to each
codec: `defaults: {producer: {compression.type: CODEC}}` in the topology, which `topo export
mm2` writes as `src->dst.producer.override.compression.type` for MM2's Connect producer. The
values are JSON order events (`payload()`, 1 KiB each, ids and amounts varying, field names
and shapes repeated), so the codecs have what a real topic gives them to work with. MM2 and topo
alternate (ABBA), each codec in turn, `--rounds` times.

Printed per codec and replicator, median and range: MiB/s of the copy alone, the replicator's
CPU seconds per GiB of values, and the bytes the target keeps on disk (its log segments) per
byte of value: what crosses the network between the regions and what the target stores.
"""

import argparse
import json
import random
import shutil
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import mm2  # benchmarks/mm2.py: the labs, the bulk copy and its measures
import replication as bench

SIZE = 1024
LINES = 4096  # distinct payload lines; perf-test picks one at random for each record
WORDS = [
    "please",
    "deliver",
    "to",
    "the",
    "back",
    "door",
    "ring",
    "twice",
    "leave",
    "with",
    "neighbour",
    "gift",
    "wrap",
    "fragile",
    "handle",
    "with",
    "care",
    "call",
    "before",
    "delivery",
    "office",
    "hours",
    "only",
    "weekend",
    "not",
    "express",
    "standard",
    "invoice",
    "attached",
    "customer",
    "number",
    "reference",
    "order",
    "return",
    "label",
    "included",
    "discount",
    "code",
    "applied",
    "loyalty",
    "points",
    "used",
    "promotion",
    "spring",
    "sale",
    "bundle",
    "replacement",
    "for",
    "damaged",
    "item",
]


def payload(file: Path, seed: int = 7) -> Path:
    """LINES JSON order events of exactly SIZE bytes each, one per line."""
    pick = random.Random(seed)
    lines = []
    for number in range(LINES):
        event = {
            "type": "order.placed",
            "order_id": f"ord-{pick.randrange(10**12):012d}",
            "customer": {
                "id": f"cus-{pick.randrange(10**8):08d}",
                "country": pick.choice(["DE", "FR", "US", "GB", "JP", "BR", "IN"]),
                "tier": pick.choice(["free", "pro", "enterprise"]),
            },
            "items": [
                {
                    "sku": f"sku-{pick.randrange(10**6):06d}",
                    "quantity": pick.randint(1, 5),
                    "price": round(pick.uniform(1, 500), 2),
                }
                for _ in range(pick.randint(1, 4))
            ],
            "currency": "EUR",
            "created_at": 1_764_000_000_000 + number * 137,
            "note": "",
        }
        text = json.dumps(event, separators=(",", ":"))
        pad = SIZE - len(text)
        note = ""
        while len(note) < pad:  # free text, as a person writes it: words repeat
            note += pick.choice(WORDS) + " "
        event["note"] = note[:pad]
        line = json.dumps(event, separators=(",", ":"))
        assert len(line) == SIZE, len(line)
        lines.append(line)
    file.write_text("\n".join(lines))
    return file


def on_disk(cluster: str, topic: str) -> int:
    """The bytes of the topic's log segments on the lab cluster's disk."""
    from topology.lab import state

    return sum(log.stat().st_size for log in state.data_dir(cluster).glob(f"{topic}-*/*.log"))


@dataclass
class Run:
    codec: str
    replicator: str
    mib_per_second: float
    cpu_per_gib: float
    target_bytes_per_value_byte: float
    source_bytes_per_value_byte: float


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--codecs", default="none,lz4,snappy,gzip,zstd")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    codecs = [c.strip() for c in options.codecs.split(",") if c.strip()]
    root = bench.private_run("topo-bench-compression-")
    from topology.host import maven
    from topology.lab import manager, mirrormaker

    folder = root / "work"
    folder.mkdir()
    mm2.PAYLOAD_FILE = payload(root / "payload.jsonl")
    tools = bench.kafka_tools()
    maven.resolve(mirrormaker.ARTIFACTS, report=print)
    runs: list[Run] = []
    try:
        print(f"Starting {mm2.SOURCE} and {mm2.TARGET} in {root} ...", flush=True)
        manager.up([manager.UpRequest(mm2.SOURCE), manager.UpRequest(mm2.TARGET)])
        brokers = [s.pid for s in map(manager.status_of, (mm2.SOURCE, mm2.TARGET)) if s.pid]
        for round_number in range(options.rounds):
            for codec in codecs:
                mm2.DEFAULTS["producer"] = f"{{compression.type: {codec}}}"
                order = (mm2.MM2, mm2.TOPO) if round_number % 2 == 0 else (mm2.TOPO, mm2.MM2)
                for who in order:
                    run = f"r{round_number}{codec}{who.lower()}"
                    print(f"{who}, {codec}: bulk copy of {options.records:,} x 1 KiB ...")
                    done = mm2.bulk(who, folder, tools, brokers, run, options.records, SIZE)
                    topic = f"{run}-bulk{SIZE}"
                    values = options.records * SIZE
                    runs.append(
                        Run(
                            codec,
                            who,
                            done.mib_per_second,
                            done.cpu_per_gib,
                            on_disk(mm2.TARGET, f"src.{topic}") / values,
                            on_disk(mm2.SOURCE, topic) / values,
                        )
                    )
                    print(f"  {runs[-1]}", flush=True)
    finally:
        manager.down([], purge=True)
        shutil.rmtree(root, ignore_errors=True)
    print(table(runs, codecs))
    if options.json:
        options.json.write_text(
            json.dumps(
                {
                    "machine": bench.machine(),
                    "records": options.records,
                    "runs": list(map(asdict, runs)),
                },
                indent=2,
            )
        )


def table(runs: list[Run], codecs: list[str]) -> str:
    rows = [
        "| codec | replicator | MiB/s | CPU s per GiB | target bytes per value byte |",
        "|---|---|---|---|---|",
    ]
    for codec in codecs:
        for who in (mm2.MM2, mm2.TOPO):
            mine = [r for r in runs if r.codec == codec and r.replicator == who]
            if not mine:
                continue
            rows.append(
                f"| {codec} | {who} | {_spread([r.mib_per_second for r in mine])} | "
                f"{_spread([r.cpu_per_gib for r in mine])} | "
                f"{_spread([r.target_bytes_per_value_byte for r in mine], 3)} |"
            )
    return "\n".join(rows)


def _spread(values: list[float], digits: int = 1) -> str:
    middle = statistics.median(values)
    if len(values) == 1:
        return f"{middle:.{digits}f}"
    return f"{middle:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


if __name__ == "__main__":
    sys.exit(main())
