"""Other repositories can run `topo validate` as a pre-commit hook."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).parent.parent.parent
GOLDEN = ROOT / "tests" / "golden"


def _hooks() -> list[dict[str, object]]:
    loaded: list[dict[str, object]] = YAML(typ="safe").load(ROOT / ".pre-commit-hooks.yaml")
    return loaded


def test_hooks_run_topo_validate_on_topology_files() -> None:
    hooks = {h["id"]: h for h in _hooks()}
    assert set(hooks) == {"topo-validate", "topo-validate-system"}
    for hook in hooks.values():
        assert hook["entry"] == "topo validate"
        files = re.compile(str(hook["files"]))
        assert files.search("topology.yaml") and files.search("kafka/prod.topo.yml")
        assert not files.search("docker-compose.yaml")


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_the_system_hook_fails_a_commit_with_a_broken_topology(tmp_path: Path) -> None:
    repo = tmp_path / "user-repo"
    repo.mkdir()
    shutil.copy(GOLDEN / "valid-prefix-ring" / "topology.yaml", repo / "topology.yaml")
    (repo / "broken.topo.yaml").write_text(
        (GOLDEN / "T201-unknown-cluster" / "topology.yaml").read_text()
    )
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run([*git, "add", "."], cwd=repo, check=True, env=env)
    pre_commit = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "topo-validate-system"]
    good = subprocess.run(
        [*pre_commit, "--files", "topology.yaml"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run(
        [*pre_commit, "--all-files"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert "error[T201]" in bad.stdout
