"""Shared by the tests: run topo as a user's shell would."""

import subprocess
import sys


def run_topo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a fresh interpreter; exit code, stdout and stderr."""
    code = "from topology.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False
    )
