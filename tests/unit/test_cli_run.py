"""`topo run`'s reading of the run log: a file edited and applied while it runs is picked up."""

import hashlib
from pathlib import Path

import pytest

from topology import runstate
from topology.analysis import analyse
from topology.cli import run
from topology.cli.live import Loaded
from topology.jobs import document, specs_of

BEFORE = """version: 1
name: orders
clusters:
  a: {bootstrap: "127.0.0.1:9001"}
  b: {bootstrap: "127.0.0.1:9002"}
flows:
  - mirror: {from: a, to: b}
"""
AFTER = BEFORE + "    delivery: exactly-once\n"


class Log:
    """topo-runs.internal as `topo run` reads it: a Book fed with records."""

    def __init__(self) -> None:
        self.book = runstate.Book()
        self.offset = 0

    def publish(self, text: str) -> None:
        analysis = analyse(text, "orders.yaml")
        assert analysis.topology is not None
        sha = hashlib.sha256(text.encode()).hexdigest()
        jobs = document("orders", sha, specs_of(analysis.topology), now=1.0).to_dict()
        self.book.feed(b"orders/jobs", runstate.encode(jobs), 1_000, self.offset)
        self.offset += 1

    def read(self) -> runstate.Book:
        return self.book


def loaded(file: Path) -> Loaded:
    text = file.read_text()
    analysis = analyse(text, str(file))
    assert analysis.topology is not None
    return Loaded(str(file), hashlib.sha256(text.encode()).hexdigest(), analysis.topology)


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    lines: list[str] = []
    monkeypatch.setattr(run, "say", lines.append)
    return lines


def test_jobs_applied_from_the_file_as_it_is_now_are_run_after_the_file_changed(
    tmp_path: Path, said: list[str]
) -> None:
    file = tmp_path / "orders.yaml"
    file.write_text(BEFORE)
    log = Log()
    runs = run._Runs(loaded(file), log)  # type: ignore[arg-type]
    log.publish(BEFORE)
    first = runs.wanted()
    assert first.unusable is None and first.generation == 0

    # The file is edited and applied: its new jobs run, with the new file.
    file.write_text(AFTER)
    log.publish(AFTER)
    second = runs.wanted()
    assert second.unusable is None and second.generation == 1
    assert second.jobs.specs[0].delivery == "exactly-once"
    assert runs.loaded.sha256 == hashlib.sha256(AFTER.encode()).hexdigest()
    assert said == [f"{file} changed and is the applied version now: running its jobs"]


def test_jobs_of_a_version_this_machine_does_not_have_wait_and_say_why(
    tmp_path: Path, said: list[str]
) -> None:
    file = tmp_path / "orders.yaml"
    file.write_text(BEFORE)
    log = Log()
    runs = run._Runs(loaded(file), log)  # type: ignore[arg-type]
    log.publish(AFTER)  # applied elsewhere from an edited copy not deployed here
    wanted = runs.wanted()
    assert wanted.unusable is not None and "another version of" in wanted.unusable
    assert runs.loaded.sha256 == hashlib.sha256(BEFORE.encode()).hexdigest()
    assert said == []
