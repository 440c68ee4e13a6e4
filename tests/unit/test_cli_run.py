"""`topo run`'s reading of the run log: the published jobs document is the whole contract, so
new jobs are run as published, whatever the topology file on this machine says now."""

import hashlib
from pathlib import Path

import pytest

from topology.cli import run
from topology.cli.live import Loaded
from topology.core import runstate
from topology.core.analysis import analyse
from topology.core.jobs import document

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
        jobs = document(analysis.topology, now=1.0).to_dict()
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
def said(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    monkeypatch.setenv("TOPO_STATE_DIR", str(tmp_path / "state"))
    lines: list[str] = []
    monkeypatch.setattr(run, "say", lines.append)
    return lines


def test_jobs_run_when_they_are_what_the_file_here_makes_a_comment_changing_nothing(
    tmp_path: Path, said: list[str]
) -> None:
    file = tmp_path / "orders.yaml"
    file.write_text(BEFORE)
    log = Log()
    runs = run._Runs(loaded(file), log)  # type: ignore[arg-type]
    log.publish(BEFORE)
    first = runs.wanted()
    assert first.unusable is None and first.generation == 0

    # A comment added here changes nothing the jobs run: they still run.
    file.write_text("# reviewed\n" + BEFORE)
    assert runs.wanted().unusable is None

    # Applied elsewhere from an edited copy not deployed here: they wait, and say why (whoever
    # may write the log must not make this machine run jobs of their own).
    log.publish(AFTER)
    waiting = runs.wanted()
    assert waiting.generation == 1 and waiting.unusable is not None
    assert f"not what {file} makes here (a->b: delivery differs)" in waiting.unusable

    # The applied revision deployed (with a comment of its own): they run, no restart needed.
    file.write_text(AFTER + "# deployed\n")
    second = runs.wanted()
    assert second.unusable is None and second.generation == 1
    assert second.jobs is not None and second.jobs.specs[0].delivery == "exactly-once"
    assert said == []


def test_a_stop_that_crosses_the_supervisors_exit_does_not_become_its_exit_code() -> None:
    """`topo stop` asks through the run log, then signals: a SIGTERM arriving as `topo run`
    exits (when Python has put back the default actions) would make its exit code -15."""
    import subprocess
    import sys

    program = (
        "import os, signal\n"
        "from topology.cli import run\n"
        "signal.signal(signal.SIGTERM, lambda *_: None)  # as topo run's handler\n"
        "run._deaf_to_late_stops()\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN\n"
    )
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=60)
    assert finished.returncode == 0, finished.stderr
