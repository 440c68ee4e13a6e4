"""`topo import mm2|strimzi|connect FILE... [-o OUT.yaml]`: a MirrorMaker 2 deployment's config
(dedicated mode's mm2.properties, a Strimzi resource, Connect connector configurations) as a
topology file."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from collections.abc import Iterable

    from topology.core.diagnostics import Diagnostic
    from topology.core.mm2.connect import Sources
    from topology.core.mm2.import_context import EnvVar
    from topology.core.mm2.importer import ImportResult

import_app = typer.Typer(
    help="Turn another tool's replication config into a topology file.", no_args_is_help=True
)
app = import_app


@import_app.command("mm2")
def mm2(
    file: Annotated[
        str, typer.Argument(help="MM2 dedicated-mode config, mm2.properties (- for stdin).")
    ],
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", help="Write the topology here instead of stdout."),
    ] = None,
) -> None:
    """Import an MM2 config: every property is mapped or warned about; secrets become env vars.

    Exit 0 when imported (warnings included), 1 when the config has errors.
    """
    from topology.cli.files import read_text
    from topology.core.mm2.importer import import_properties

    text = read_text(file)
    _finish(import_properties(text, file), _Shown(file), file, output, "topo import mm2")


@import_app.command("strimzi")
def strimzi(
    file: Annotated[
        str,
        typer.Argument(help="A Strimzi KafkaMirrorMaker2 resource, FILE.yaml (- for stdin)."),
    ],
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", help="Write the topology here instead of stdout."),
    ] = None,
) -> None:
    """Import a Strimzi KafkaMirrorMaker2 resource: its clusters, logins (secrets stay in their
    Kubernetes Secrets) and mirrors, mapped as `topo import mm2` maps MM2's properties.

    Exit 0 when imported (warnings included), 1 when the resource has errors.
    """
    from topology.cli.files import read_text
    from topology.core.mm2 import strimzi as resource
    from topology.core.mm2.stand_in import imported

    text = read_text(file)
    result = imported(resource.read(text, file), text)
    _finish(result, _Shown(file), file, output, "topo import strimzi")


@import_app.command("connect")
def connect(
    files: Annotated[
        list[str],
        typer.Argument(
            help="MirrorMaker 2's connector configurations as Kafka Connect's REST API takes "
            "or gives them, FILE.json...",
        ),
    ],
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", help="Write the topology here instead of stdout."),
    ] = None,
    offsets_topic: Annotated[
        str,
        typer.Option(help="The Connect worker's offset.storage.topic (for start: mm2)."),
    ] = "connect-offsets",
    status_topic: Annotated[
        str,
        typer.Option(help="The Connect worker's status.storage.topic (for topo status)."),
    ] = "connect-status",
) -> None:
    """Import MM2 run as connectors on a Kafka Connect cluster: the MirrorSourceConnector,
    MirrorCheckpointConnector and MirrorHeartbeatConnector configurations of its flows.

    Exit 0 when imported (warnings included), 1 when the configurations have errors.
    """
    from topology.cli.files import read_text
    from topology.core.mm2 import connect as connectors
    from topology.core.mm2.stand_in import imported

    given = [(file, read_text(file)) for file in files]
    stand_in, text, sources = connectors.read(
        given, offsets_topic=offsets_topic, status_topic=status_topic
    )
    result = imported(stand_in, text, sources.line_name)
    label = files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1} more"
    _finish(result, _Shown(files[0], sources), label, output, "topo import connect")


class _Shown:
    """Where diagnostics are shown: the lines of the file they are in, secrets masked. The
    files of `topo import connect` are read as one text; `sources` says whose line is whose."""

    def __init__(self, file: str, sources: "Sources | None" = None) -> None:
        self.file = file
        self.sources = sources

    def show(self, diagnostics: "Iterable[Diagnostic]", shown_text: str) -> None:
        from topology.cli.report import show
        from topology.core.mm2.import_context import folded
        from topology.core.source import Document

        if self.sources is None:
            show(folded(diagnostics), Document(self.file, shown_text, None))
            return
        documents = self.sources.documents(shown_text)
        show(folded(self.sources.placed(d) for d in diagnostics), documents)


def _finish(
    result: "ImportResult", shown: _Shown, label: str, output: str | None, command: str
) -> None:
    """Show what the import found, write the topology, and check it as `topo validate` would."""
    from topology.cli.files import write_text
    from topology.cli.report import show
    from topology.core.analysis import analyse
    from topology.core.mm2 import import_check, yaml_out
    from topology.core.mm2.import_context import folded
    from topology.core.mm2.import_header import header
    from topology.core.render import diagnostics as render

    shown.show(result.diagnostics, result.shown_text)
    if result.data is None:
        typer.echo(f"{render.summary(label, result.diagnostics)}; nothing imported", err=True)
        raise typer.Exit(1)
    text = yaml_out.render(result.data, header(result, label, command))
    # The import must give a topology topo accepts; say so plainly if it does not. Written
    # to a file, its problems are shown there; on stdout, at the lines they came from.
    check = analyse(text, output or "<imported topology>")
    if output is None:
        typer.echo(text, nl=False)
        moved = import_check.in_properties(
            check.diagnostics, check.document, result.origins, shown.file
        )
        shown.show(moved, result.shown_text)
    else:
        write_text(output, text)
        show(folded(check.diagnostics), check.document)
    _tell_env_vars(result.env_vars)
    flows = len(result.data["flows"])
    typer.echo(
        f"{label}: imported {len(result.data['clusters'])} clusters and {flows} "
        f"flow{'' if flows == 1 else 's'}"
        + (f" into {output}" if output else "")
        + f" ({_count(result.diagnostics, 'warning')})",
        err=True,
    )
    if not check.ok:
        subjects = import_check.subjects(check.diagnostics, check.document)
        typer.echo(
            "error: the imported topology does not pass topo validate (see above); MM2 "
            f"accepted this config, topo does not: fix {subjects} as the errors say",
            err=True,
        )
        raise typer.Exit(1)


def _tell_env_vars(variables: Sequence["EnvVar"]) -> None:
    if not variables:
        return
    typer.echo(
        "Set these environment variables where topo runs (the secrets are not in the file):",
        err=True,
    )
    from topology.core.diagnostics import one_line

    # Names and purposes quote the properties' names: control characters (a terminal's escape,
    # a NUL) are written as escapes, as the warnings write them.
    rows = [(one_line(v.name), one_line(v.purpose)) for v in variables]
    width = max(len(name) for name, _ in rows)
    for name, purpose in rows:
        typer.echo(f"  {name.ljust(width)}  {purpose}", err=True)


def _count(items: Sequence[object], word: str) -> str:
    return f"{len(items)} {word}{'' if len(items) == 1 else 's'}"
