import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from topology.core.errors import ToolMissingError, TopoError
from topology.host import maven

ROOT = Path(__file__).resolve().parents[2]
POM = "{http://maven.apache.org/POM/4.0.0}"


def test_artifact_sets_are_well_formed_poms() -> None:
    for name in ["kafka-broker", "spark-kafka"]:
        project = ET.fromstring(maven.pom_text(name))
        assert project.find(f"{POM}dependencies") is not None


def test_spark_connector_matches_the_pinned_pyspark() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    engine = pyproject["project"]["optional-dependencies"]["spark"]
    pin = next(d for d in engine if d.startswith("pyspark"))
    assert not any(d.startswith("pyspark") for d in pyproject["project"]["dependencies"]), (
        "pyspark belongs in the 'spark' extra, so `pip install topo` stays lean"
    )
    pinned = re.fullmatch(r"pyspark==(\S+)", pin)
    assert pinned, f"pyspark must be pinned exactly, found {pin!r}"
    properties = ET.fromstring(maven.pom_text("spark-kafka")).find(f"{POM}properties")
    assert properties is not None
    assert properties.findtext(f"{POM}spark.version") == pinned.group(1)


def test_unknown_set_is_an_error() -> None:
    with pytest.raises(TopoError, match="unknown artifact set"):
        maven.pom_text("nope")


def test_resolved_folder_changes_with_the_pom(monkeypatch: pytest.MonkeyPatch) -> None:
    first = maven.resolved_dir("kafka-broker")
    monkeypatch.setattr(maven, "pom_text", lambda _name: "<project>other</project>")
    assert maven.resolved_dir("kafka-broker") != first


def test_no_mvn_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOPO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissingError, match=r"Maven \(mvn\) is needed"):
        maven.resolve("kafka-broker")


def test_failed_resolution_names_the_cause_and_keeps_the_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bin" / "mvn"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\necho '[INFO] Scanning'\necho '[ERROR] Could not find artifact x'\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("TOPO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(fake.parent))
    with pytest.raises(TopoError, match="Could not find artifact x") as raised:
        maven.resolve("kafka-broker")
    log = re.search(r"\(log: (.+)\)", str(raised.value))
    assert log and "[ERROR] Could not find artifact x" in Path(log.group(1)).read_text()
    assert not maven.resolved_dir("kafka-broker").exists()  # no half-done folder left behind
