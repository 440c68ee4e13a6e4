"""`topo verify` on lab clusters: a real copy (a filtered flow over plain, transactional and
compacted topics) is proven record by record, a lagging one is behind, and a target with a
copy altered, one deleted and one duplicated is named at the first differing offset."""

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import RECENT_MS, run_topo
from tests.integration.test_offsets import _compacted_with_gaps, _transactional
from tests.integration.test_replication import Topology, varied
from topology.core.jobs import JobSpec, copied_headers, specs_of
from topology.core.offsets.checkpoints import Progress, encode_progress
from topology.kafka import records
from topology.kafka.offsets import LogWriter
from topology.kafka.records import Record

pytestmark = [pytest.mark.kafka]

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas/verify.schema.json").read_text()))
FILTER = "key IS NULL OR CAST(key AS STRING) NOT LIKE '%2'"


def verify(topology: Topology, *args: str) -> tuple[int, list[dict[str, Any]]]:
    done = run_topo("verify", str(topology.file), "--format", "json", *args)
    assert done.stdout, done.stderr
    document = json.loads(done.stdout)
    SCHEMA.validate(document)
    assert document["exit"] == done.returncode
    return done.returncode, document["partitions"]


def kept(found: list[Record]) -> list[Record]:
    """What FILTER keeps, in Python."""
    return [r for r in found if r.key is None or not r.key.decode().endswith("2")]


@pytest.mark.spark
def test_a_filtered_copy_of_plain_transactional_and_compacted_topics_is_proven(
    tmp_path: Path, lab: dict[str, dict[str, str]]
) -> None:
    topology = Topology(tmp_path, {"src": lab[SOURCE_CLUSTER], "dst": lab[TARGET_CLUSTER]})
    src = topology.clusters["src"]
    plain, txn, compact = topology.topic("plain"), topology.topic("txn"), topology.topic("compact")
    records.create_topic(src, plain, 3)
    records.produce(src, varied(plain, 30, partitions=3))
    _transactional(src, txn, topology.prefix)
    _compacted_with_gaps(src, compact)
    topology.write(f'  - mirror: {{from: src, to: dst}}\n    filter: "{FILTER}"')
    try:
        topology.apply("--once")
        code, proofs = verify(topology)
        assert code == 0, proofs
        assert {p["verdict"] for p in proofs} == {"proven"} and len(proofs) == 9
        by_topic: dict[str, int] = {}
        for proof in proofs:
            assert proof["source"] == proof["target"]  # counts and digests
            by_topic[proof["topic"]] = by_topic.get(proof["topic"], 0) + proof["source"]["records"]
        # Read committed and filtered: aborted transactions and keys ending in 2 are not there.
        assert by_topic[plain] == len(kept(records.read_topic(src, plain))) < 30
        assert by_topic[txn] == len(kept(records.read_topic(src, txn))) < 36
        assert all(p["compacted"] == (p["topic"] == compact) for p in proofs)

        # Records written after the copy: behind (exit 2), counted, nothing differs.
        records.produce(src, varied(plain, 6, partitions=3, tag="late"))
        code, proofs = verify(topology, "--topic", plain)
        assert code == 2 and {p["verdict"] for p in proofs} == {"behind"}
        assert sum(p["not_copied"] for p in proofs) == 6
    finally:
        topology.stop()


def _copies(spec: JobSpec, found: list[Record], remote: str) -> list[Record]:
    """The copies the flow writes of `found`, as topo's copy writes them."""
    return [
        Record(
            remote,
            r.partition,
            r.key,
            r.value,
            copied_headers(spec, r.headers, r.offset or 0),
            r.timestamp_ms,
        )
        for r in found
    ]


def test_an_altered_a_deleted_and_a_duplicated_copy_are_named_where_they_differ(
    tmp_path: Path, lab: dict[str, dict[str, str]]
) -> None:
    """The target's copies are written here as topo writes them, with one partition clean and
    one fault in each other: what verify reads is real Kafka either way."""
    topology = Topology(tmp_path, {"src": lab[SOURCE_CLUSTER], "dst": lab[TARGET_CLUSTER]})
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("faults")
    remote = f"src.{topic}"
    topology.write("  - mirror: {from: src, to: dst}")
    from topology.core import analysis

    loaded = analysis.analyse(topology.file.read_text(), str(topology.file))
    assert loaded.topology is not None
    [spec] = specs_of(loaded.topology)
    records.create_topic(src, topic, 4)
    records.produce(
        src,
        [
            Record(topic, p, f"k{i}".encode(), f"v{p}-{i}".encode(), (("h", b"1"),), RECENT_MS + i)
            for p in range(4)
            for i in range(8)
        ],
    )
    held = records.read_topic(src, topic)
    records.create_topic(dst, remote, 4)
    copies = {p: _copies(spec, [r for r in held if r.partition == p], remote) for p in range(4)}
    copies[1][3] = dataclasses.replace(copies[1][3], value=b"altered")
    del copies[2][5]
    copies[3].insert(6, copies[3][2])  # an at-least-once replay of offset 2
    records.produce(dst, [r for p in range(4) for r in copies[p]])
    log = LogWriter(dst)
    log.write(
        "topo-offset-syncs.src.internal",
        [encode_progress(Progress(spec.flow, topic, p, 8)) for p in range(4)],
    )
    log.flush()

    code, proofs = verify(topology, "--flow", "src->dst", "--topic", topic)
    assert code == 1
    found = {p["partition"]: (p["verdict"], p["first_difference"]) for p in proofs}
    assert found[0] == ("proven", None)
    assert found[1][0] == "differs" and found[1][1]["kind"] == "altered"
    assert (found[1][1]["source_offset"], found[1][1]["target_offset"]) == (3, 3)
    assert found[2][0] == "differs" and found[2][1]["kind"] == "missing"
    assert found[2][1]["source_offset"] == 5
    assert found[3][0] == "differs" and found[3][1]["kind"] == "duplicated"
    assert (found[3][1]["source_offset"], found[3][1]["target_offset"]) == (2, 6)
    text = run_topo("verify", str(topology.file), "--topic", topic)
    assert text.returncode == 1 and "first at source offset 5" in text.stdout
    assert "3 proven" not in text.stdout and "1 proven" in text.stdout
