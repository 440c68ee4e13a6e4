"""The spark-submit command line: Spark settings go to a private file, never to arguments."""

import dataclasses
import json
import re
import stat
import subprocess
from pathlib import Path

import pytest

from topology.core import model_data
from topology.core.jobs import JobsDocument, read_document
from topology.core.model import Engine
from topology.host import jobstate
from topology.spark import installed, launch

JOBS = JobsDocument(
    owner="orders",
    published_at=1.0,
    topology_data={
        "name": "orders",
        "clusters": {},
        "flows": [],
        "engine": model_data.engine_data(Engine()),
    },
    specs=(),
)


@pytest.fixture
def submission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> launch.Submission:
    monkeypatch.setenv("TOPO_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(installed, "require", lambda _doing: None)
    monkeypatch.setattr(launch, "kafka_connector_jars", lambda report: [Path("/jars/k.jar")])
    monkeypatch.setattr(launch, "topo_jar", lambda jars: Path("/jars/i.jar"))
    monkeypatch.setattr(launch, "_spark_submit", lambda: "/spark/bin/spark-submit")
    return launch.Submission(
        owner="orders",
        base="/t",
        runner="local",
        master="local[2]",
        spark_conf={"spark.hadoop.fs.s3a.secret.key": "s3cr3t\\value\nline"},
    )


def test_spark_settings_are_in_a_private_file_not_on_the_command_line(
    submission: launch.Submission,
) -> None:
    args = launch.command(submission, "once", lambda _line: None, Path("/s/jobs.json"))
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


def _java_options(submission: launch.Submission) -> str:
    args = launch.command(submission, "once", lambda _line: None, Path("/s/jobs.json"))
    lines = Path(args[args.index("--properties-file") + 1]).read_text().splitlines()
    return next(line.split("=", 1)[1] for line in lines if "defaultJavaOptions" in line)


@pytest.mark.parametrize(
    ("memory", "initial"),
    [(None, "-Xms1g"), ("2g", "-Xms2g"), ("1536m", "-Xms1536m"), ("2G", "-Xms2G")],
)
def test_the_driver_starts_with_its_whole_heap_and_kafkas_collector_settings(
    submission: launch.Submission, memory: str | None, initial: str
) -> None:
    """-Xms as spark.driver.memory, exactly as spark-submit writes it after -Xmx."""
    given = {} if memory is None else {"spark.driver.memory": memory}
    options = _java_options(dataclasses.replace(submission, spark_conf=given)).split()
    assert options[-1] == initial
    assert "-XX:MaxGCPauseMillis=20" in options and sum(o.startswith("-Xms") for o in options) == 1


def test_a_topologys_own_java_options_or_an_unreadable_size_are_left_as_given(
    submission: launch.Submission,
) -> None:
    own = {"spark.driver.defaultJavaOptions": "-XX:+UseZGC"}
    assert _java_options(dataclasses.replace(submission, spark_conf=own)) == "-XX:+UseZGC"
    # spark-submit gives Java these after -Xmx as they are (2048 bytes; 1536mb, refused):
    # an -Xms of another reading would only change the error, or the heap
    for odd in ("1.5g", "2048", "1536mb"):
        given = {"spark.driver.memory": odd}
        assert "-Xms" not in _java_options(dataclasses.replace(submission, spark_conf=given))


def test_a_key_that_would_end_early_or_be_a_comment_is_escaped() -> None:
    assert launch._escaped("a=b:c d#!", key=True) == "a\\=b\\:c\\ d\\#\\!"
    assert launch._escaped("x=y") == "x=y"  # in a value, '=' needs nothing


def test_spark_defaults_are_still_loaded_beside_the_settings_file(
    submission: launch.Submission,
) -> None:
    assert "--load-spark-defaults" in launch.command(
        submission, "once", lambda _line: None, Path("/j")
    )


class _Finished:
    """A spark-submit that printed one progress line and exited 0."""

    def __init__(self, *_args: object, **_options: object) -> None:
        self.stdout = iter(["topo: copied 3 records\n"])
        self.pid = 4242

    def wait(self, timeout: float | None = None) -> int:
        return 0


def _settings(submission: launch.Submission) -> Path:
    return jobstate.folder(submission.owner) / launch.SPARK_PROPERTIES


def test_once_deletes_the_settings_file_when_the_driver_exits(
    submission: launch.Submission, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []

    def finished(*args: object, **options: object) -> _Finished:
        seen.append(_settings(submission).exists())  # there while spark-submit starts
        return _Finished()

    monkeypatch.setattr(subprocess, "Popen", finished)
    lines: list[str] = []
    assert launch.run_once(submission, JOBS, lines.append) == 0
    assert seen == [True] and lines == ["copied 3 records"]
    assert not _settings(submission).exists()


@pytest.mark.parametrize("runner", ["run_once", "spawn"])
def test_the_settings_file_is_deleted_when_spark_submit_cannot_start(
    submission: launch.Submission, monkeypatch: pytest.MonkeyPatch, runner: str
) -> None:
    def missing(*args: object, **options: object) -> None:
        raise FileNotFoundError("spark-submit")

    monkeypatch.setattr(subprocess, "Popen", missing)
    with pytest.raises(FileNotFoundError):
        getattr(launch, runner)(submission, JOBS, lambda _line: None)
    assert not _settings(submission).exists()


def test_the_driver_is_given_the_jobs_document_it_runs(submission: launch.Submission) -> None:
    path = launch.write_jobs(submission.owner, JOBS)
    args = launch.command(submission, "continuous", lambda _line: None, path)
    assert args[args.index("--jobs") + 1] == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_document(json.loads(path.read_text())) == JOBS


def test_the_driver_runs_the_jobs_document_alone_and_refuses_one_changed_or_of_another_format(
    tmp_path: Path,
) -> None:
    from topology.core import analysis
    from topology.core.jobs import JobsFormatError, document
    from topology.spark import driver

    text = 'version: 1\nname: orders\nclusters:\n  a: {bootstrap: "h:1"}\n  b: {bootstrap: "h:2"}\n'
    loaded = analysis.analyse(text + "flows:\n  - mirror: {from: a, to: b}\n", "orders.yaml")
    assert loaded.topology is not None
    good = document(loaded.topology, now=1.0).to_dict()
    made = read_document(good)
    injected = dataclasses.replace(made.specs[0], record_filter="true OR java_method('x', 'y')")
    forged = dataclasses.replace(made, specs=(injected,)).to_dict()  # its digest recomputed
    for data, says in (
        ({**good, "format": "1"}, "format '1' is not '2'"),
        ({**good, "owner": "payments"}, "digest does not match its content"),
        ({**good, "specs": [injected.to_dict()]}, "digest does not match its content"),
        (forged, "not the ones its topology makes"),
        ({**good, "topology": {"name": "orders"}}, "malformed jobs document"),
    ):
        path = tmp_path / "jobs.json"
        path.write_text(json.dumps(data))
        with pytest.raises(JobsFormatError, match=re.escape(says)):
            driver._jobs(str(path))
    # The topology file is not read: the document alone is what runs.
    path.write_text(json.dumps(good))
    ran = driver._jobs(str(path))
    assert ran.owner == "orders" and [s.flow for s in ran.specs] == ["a->b"]
    assert ran.topology().clusters["b"].bootstrap == "h:2"
