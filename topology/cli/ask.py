"""The question `topo apply`, `topo failover` and `topo reset` ask before they change anything,
as Terraform asks it: only `yes` goes on."""

import typer


def confirm(question: str, cancelled: str) -> None:
    """Ask `question` on stderr; anything but `yes` (Ctrl-D too) says `cancelled` and exits 1."""
    typer.echo(f"\n{question} Only 'yes' is accepted.", err=True)
    try:
        answer = input("  Enter a value: ")
    except EOFError:  # Ctrl-D: no answer is no
        answer = ""
    if answer.strip() != "yes":
        typer.echo(cancelled, err=True)
        raise typer.Exit(1)
