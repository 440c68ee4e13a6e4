"""`topo reset` refuses bad input in one line, before reaching a cluster where it can, and a
cluster that does not answer is one line too."""

from pathlib import Path

import pytest

from tests.helpers import run_topo

TOPOLOGY = """\
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:1"}
  west: {bootstrap: "127.0.0.1:2"}
engine: {runner: none}
flows:
  - mirror: {from: east, to: west}
    paused: PAUSED
"""


def topology(tmp_path: Path, paused: bool) -> str:
    file = tmp_path / "t.yaml"
    file.write_text(TOPOLOGY.replace("PAUSED", str(paused).lower()))
    return str(file)


@pytest.mark.parametrize(
    ("args", "paused", "message"),
    [
        (["--flow", "west->east", "--to", "latest"], True, "no flow west->east in"),
        (["--flow", "east->west", "--to", "soon"], True, "--to 'soon' is not earliest, latest"),
        (["--flow", "east->west", "--to", "0"], False, "east->west is not paused in"),
        (["--flow", "east->west", "--to", "0", "--json"], True, "--json asks nothing"),
        (["--flow", "east->west", "--to", "0"], True, "standard input is not a terminal"),
        # paused and asked to look: the cluster that does not answer is the error
        (["--flow", "east->west", "--to", "0", "--dry-run"], True, "127.0.0.1:1"),
    ],
)
def test_reset_refuses_in_one_line(
    tmp_path: Path, args: list[str], paused: bool, message: str
) -> None:
    done = run_topo("reset", topology(tmp_path, paused), *args)
    assert done.returncode == 1, done.stdout
    assert message in done.stderr and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, done.stderr
