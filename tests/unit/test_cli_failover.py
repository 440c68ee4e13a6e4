"""`topo failover` and `topo offsets` refuse bad input in one line, before reaching a cluster."""

from pathlib import Path

import pytest

from tests.helpers import run_topo

TOPOLOGY = """\
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:1"}
  west: {bootstrap: "127.0.0.1:2"}
flows:
  - mirror: {from: east, to: west}
"""


@pytest.fixture
def topology(tmp_path: Path) -> str:
    file = tmp_path / "t.yaml"
    file.write_text(TOPOLOGY)
    return str(file)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "east", "--to", "west"], "name the groups with --group, or pass --all"),
        (["--from", "east", "--to", "west", "--all", "--group", "g"], "(not both)"),
        (["--from", "south", "--to", "west", "--group", "g"], "no cluster south in"),
        (["--from", "east", "--to", "east", "--group", "g"], "--from and --to name the same"),
    ],
)
def test_failover_refuses_bad_arguments_in_one_line(
    topology: str, args: list[str], message: str
) -> None:
    done = run_topo("failover", topology, *args)
    assert done.returncode == 1
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0


def test_offsets_needs_a_group(topology: str) -> None:
    done = run_topo("offsets", topology)
    assert done.returncode == 1 and "--group" in done.stderr and "Traceback" not in done.stderr


def test_failover_of_a_missing_file_is_one_line(tmp_path: Path) -> None:
    done = run_topo("failover", str(tmp_path / "nope.yaml"), "--from", "a", "--to", "b", "-g", "g")
    assert done.returncode == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("extra", [[], ["--json"], ["--from", "west", "--to", "east"]])
def test_offsets_against_clusters_that_refuse_connections_is_an_error(
    topology: str, extra: list[str]
) -> None:
    """Not "No offsets of g" and exit 0: a cluster that does not answer is an error, as in
    `topo plan` (the ports in TOPOLOGY refuse connections)."""
    done = run_topo("offsets", topology, "--group", "g", *extra)
    assert done.returncode == 1, done.stdout
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert "cannot be reached" in done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "standard input is not a terminal; pass --auto-approve"),
        (["--json"], "--json asks nothing: pass --dry-run, or --auto-approve"),
    ],
)
def test_failover_asks_before_committing_and_refuses_where_it_cannot_ask(
    topology: str, args: list[str], message: str
) -> None:
    """Refused before any cluster is read (the ports refuse connections: reading would be
    another error)."""
    done = run_topo("failover", topology, "--from", "east", "--to", "west", "-g", "g", *args)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and message in done.stderr


@pytest.mark.parametrize("approval", ["--dry-run", "--auto-approve"])
def test_failover_all_checks_the_destination_before_reading_from_it(
    topology: str, approval: str
) -> None:
    """With --all and --from down, groups come from checkpoints on --to: a --to that does not
    answer is named at once, rather than after a read of its checkpoints times out."""
    done = run_topo("failover", topology, "--all", "--from", "east", "--to", "west", approval)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "cluster west cannot be reached" in done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("answer", ["no", "", EOFError()])
def test_anything_but_yes_at_the_question_commits_nothing(
    monkeypatch: pytest.MonkeyPatch, answer: object
) -> None:
    """Ctrl-D included: a cancel, exit 1, not a traceback."""
    import typer

    from topology.cli.failover import _confirm

    def reply(_prompt: str) -> str:
        if isinstance(answer, BaseException):
            raise answer
        return str(answer)

    monkeypatch.setattr("builtins.input", reply)
    with pytest.raises(typer.Exit) as ended:
        _confirm("west")
    assert ended.value.exit_code == 1
    monkeypatch.setattr("builtins.input", lambda _prompt: "yes")
    _confirm("west")  # returns: the caller commits
