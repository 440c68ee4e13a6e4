"""Shared by the tests: run topo as a user's shell would."""

import subprocess
import sys
import time

# Timestamps for test records: fixed within a run, and recent. A record older than the
# topic's retention.ms (7 days by default) is deleted by the broker's next retention check,
# which would make a record vanish mid-test.
RECENT_MS = (int(time.time()) - 3600) * 1000


def run_topo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a fresh interpreter; exit code, stdout and stderr."""
    code = "from topology.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False
    )
