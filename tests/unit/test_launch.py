"""The spark-submit command line: Spark settings go to a private file, never to arguments."""

import stat
from pathlib import Path

import pytest

from topology.spark import installed, launch


@pytest.fixture
def submission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> launch.Submission:
    monkeypatch.setenv("TOPO_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(installed, "require", lambda _doing: None)
    monkeypatch.setattr(launch, "kafka_connector_jars", lambda report: [Path("/jars/k.jar")])
    monkeypatch.setattr(launch, "interceptor_jar", lambda jars: Path("/jars/i.jar"))
    monkeypatch.setattr(launch, "_spark_submit", lambda: "/spark/bin/spark-submit")
    return launch.Submission(
        owner="orders", topology_file="/t/orders.yaml", topology_sha256="0" * 64,
        runner="local", master="local[2]", specs=(),
        spark_conf={"spark.hadoop.fs.s3a.secret.key": "s3cr3t\\value\nline"},
    )  # fmt: skip


def test_spark_settings_are_in_a_private_file_not_on_the_command_line(
    submission: launch.Submission,
) -> None:
    args = launch.command(submission, "once", report=lambda _line: None)
    assert not any("s3cr3t" in arg for arg in args)
    assert "--conf" not in args
    settings = Path(args[args.index("--properties-file") + 1])
    folder = settings.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    lines = settings.read_text().splitlines()
    # Escaped as java.util.Properties reads it back: one line, the backslash doubled.
    assert "spark.hadoop.fs.s3a.secret.key=s3cr3t\\\\value\\nline" in lines
    assert any(line.startswith("spark.redaction.regex=") for line in lines)
    launch._forget_settings(submission.owner)
    assert not settings.exists()
