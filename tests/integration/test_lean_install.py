"""`pip install topo` without the `spark` extra, in a fresh virtualenv, as CI and pre-commit
install it: no pyspark, yet validate, diff, plan and apply of cluster resources work, and a
command that needs the replication engine stops before changing anything, naming the extra.

The install is real (pip, the machine's configured index and cache), from a copy of the
package's sources, so the developer's own editable install is never touched.
"""

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from topology.kafka import records

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class LeanInstall:
    python: Path
    topo: Path

    def run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.topo), *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            check=False,
            env={**os.environ, "PYTHONPATH": ""},
        )


@pytest.fixture(scope="module")
def lean(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeanInstall]:
    folder = tmp_path_factory.mktemp("lean")
    sources = folder / "src"
    sources.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, sources / name)
    shutil.copytree(
        ROOT / "topology", sources / "topology", ignore=shutil.ignore_patterns("__pycache__")
    )
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(sources)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    yield LeanInstall(venv / "bin" / "python", venv / "bin" / "topo")


def test_the_lean_install_has_no_pyspark(lean: LeanInstall) -> None:
    probe = subprocess.run(
        [str(lean.python), "-c", "import pyspark"], capture_output=True, text=True, check=False
    )
    assert probe.returncode != 0 and "No module named 'pyspark'" in probe.stderr


def test_validate_and_diff_work_without_spark(lean: LeanInstall, tmp_path: Path) -> None:
    examples = sorted(str(p) for p in (ROOT / "examples").glob("*.yaml"))
    valid = lean.run("validate", *examples, cwd=tmp_path)
    assert valid.returncode == 0, valid.stderr
    case = ROOT / "tests" / "diff" / "security-and-removal"
    changed = lean.run("diff", str(case / "base.yaml"), str(case / "head.yaml"), cwd=tmp_path)
    assert changed.returncode == 2, changed.stderr  # 2: changes, and no new problem
    assert "east->west" in changed.stdout


def _topics(config: dict[str, str]) -> set[str]:
    # {**config}: a dict[str, str | int | float | bool], as AdminClient asks (dict is invariant)
    return set(AdminClient({**config}).list_topics(timeout=10).topics)


def _topology(folder: Path, lab: dict[str, dict[str, str]], prefix: str, engine: str) -> Path:
    file = folder / f"{prefix}.yaml"
    file.write_text(
        "version: 1\n"
        f"{engine}"
        "clusters:\n"
        f'  src: {{bootstrap: "{lab[SOURCE_CLUSTER]["bootstrap.servers"]}"}}\n'
        f'  dst: {{bootstrap: "{lab[TARGET_CLUSTER]["bootstrap.servers"]}"}}\n'
        "flows:\n"
        "  - mirror: {from: src, to: dst}\n"
        f'    topics: {{include: ["{prefix}-.*"]}}\n'
        "defaults: {replication_factor: 1}\n"
    )
    return file


def test_plan_and_apply_of_cluster_resources_work_without_spark(
    lean: LeanInstall, lab: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    prefix = f"lean{uuid.uuid4().hex[:8]}"
    records.create_topic(lab[SOURCE_CLUSTER], f"{prefix}-orders", partitions=2)
    file = _topology(tmp_path, lab, prefix, "engine: {runner: none}\n")
    planned = lean.run("plan", str(file), "--detailed-exitcode", cwd=tmp_path)
    assert planned.returncode == 2, planned.stderr
    assert f"src.{prefix}-orders" in planned.stdout
    applied = lean.run("apply", str(file), "--auto-approve", cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert f"src.{prefix}-orders" in _topics(lab[TARGET_CLUSTER])


def test_starting_replication_without_spark_changes_nothing_and_names_the_extra(
    lean: LeanInstall, lab: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    prefix = f"lean{uuid.uuid4().hex[:8]}"
    records.create_topic(lab[SOURCE_CLUSTER], f"{prefix}-orders", partitions=2)
    file = _topology(tmp_path, lab, prefix, "")
    for once in ([], ["--once"]):
        refused = lean.run("apply", str(file), "--auto-approve", *once, cwd=tmp_path)
        assert refused.returncode == 1, refused.stderr
        last = refused.stderr.strip().splitlines()[-1]
        assert last.startswith("error: ") and "pip install 'topo[spark]'" in last, last
        assert "Traceback" not in refused.stderr
    assert f"src.{prefix}-orders" not in _topics(lab[TARGET_CLUSTER])
