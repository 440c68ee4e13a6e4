"""The question apply, failover and reset ask: only `yes` goes on; anything else, or none
(Ctrl-D), says what was not done and exits 1."""

import builtins

import pytest
import typer

from topology.cli.ask import confirm


def answering(monkeypatch: pytest.MonkeyPatch, answer: str | None) -> None:
    def given(_prompt: str) -> str:
        if answer is None:
            raise EOFError
        return answer

    monkeypatch.setattr(builtins, "input", given)


def test_yes_goes_on(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    answering(monkeypatch, " yes\n")
    confirm("Move them?", "Nothing moved.")
    assert "Move them? Only 'yes' is accepted." in capsys.readouterr().err


@pytest.mark.parametrize("answer", ["y", "YES", "", None])
def test_anything_else_is_no(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], answer: str | None
) -> None:
    answering(monkeypatch, answer)
    with pytest.raises(typer.Exit) as stopped:
        confirm("Move them?", "Nothing moved.")
    assert stopped.value.exit_code == 1
    assert capsys.readouterr().err.rstrip().endswith("Nothing moved.")
