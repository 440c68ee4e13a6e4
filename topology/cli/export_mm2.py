"""`topo export mm2 FILE.yaml [-o OUT.properties]`: a topology as a MirrorMaker 2 config."""

from typing import Annotated

import typer

export_app = typer.Typer(
    help="Write a topology as another tool's replication config.", no_args_is_help=True
)
app = export_app


@export_app.command("mm2")
def mm2(
    file: Annotated[str, typer.Argument(help="Topology file (- for standard input).")],
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", help="Write mm2.properties here instead of stdout."),
    ] = None,
    positions: Annotated[
        bool,
        typer.Option(
            "--positions",
            help="Also write where topo stopped each flow into MM2's offsets topic on its "
            "target, so MM2 started with this file resumes there (topo must be stopped).",
        ),
    ] = False,
) -> None:
    """Export a valid topology as mm2.properties for MM2's dedicated mode.

    What MM2 cannot express is warned about on stderr and commented in the output. Exit 1 when
    the topology has errors, or when MM2 could not hold it faithfully (two settings writing one
    property differently, a name with a line break): nothing is written.
    """
    from topology.cli.files import read_text, write_text
    from topology.cli.report import show
    from topology.core.analysis import analyse
    from topology.core.mm2.exporter import export
    from topology.core.render import diagnostics as render

    if positions and file == "-":
        from topology.core.errors import TopoError

        raise TopoError("--positions reads the topology's clusters: give the topology file, not -")
    analysis = analyse(read_text(file), file)
    show(analysis.diagnostics, analysis.document)
    if not analysis.ok or analysis.topology is None:
        typer.echo(f"{render.summary(file, analysis.diagnostics)}; nothing exported", err=True)
        raise typer.Exit(1)
    result = export(analysis.topology, file, analysis.document)
    show(result.diagnostics, analysis.document)
    if not result.ok:
        typer.echo(f"{render.summary(file, result.diagnostics)}; nothing exported", err=True)
        raise typer.Exit(1)
    if output is None:
        typer.echo(result.text, nl=False)
    else:
        write_text(output, result.text)
    if result.env_vars:
        typer.echo(
            "MM2 reads these environment variables (EnvVarConfigProvider): "
            + ", ".join(result.env_vars),
            err=True,
        )
    if positions:
        _write_positions(file)
    warnings, flows = len(result.diagnostics), len(analysis.topology.edges())
    typer.echo(
        f"{file}: exported {flows} MM2 flow{'' if flows == 1 else 's'}"
        + (f" into {output}" if output else "")
        + f" ({warnings} warning{'' if warnings == 1 else 's'} about what MM2 cannot express)",
        err=True,
    )


def _write_positions(file: str) -> None:
    """For each flow, where topo stopped (its progress log on the target) as the records MM2's
    worker resumes from (docs/mm2.md, Leaving topo for MM2). Every flow is checked before any
    is written: refused while topo or MM2 runs a flow of the topology (the one would move on,
    the other overwrite them), and where MM2 is further on than topo (it ran after topo)."""
    from topology.cli import live
    from topology.core.errors import TopoError
    from topology.core.jobs import specs_of
    from topology.core.mm2.positions import further_on, names_of, offset_record
    from topology.core.naming import offset_syncs_topic
    from topology.kafka import mm2_state
    from topology.kafka.offsets import read_progress

    loaded = live.load(file)
    configs = live.client_configs(loaded)
    if live.running_jobs(loaded):
        raise TopoError(
            f"replication of {loaded.topology.name} is running; stop it first (topo stop "
            f"{file}): MM2 must start where topo stopped, not where it is now"
        )
    writes = []
    for spec in specs_of(loaded.topology):
        target = configs[spec.target]
        names = names_of(loaded.topology.edge(spec.flow))
        running = mm2_state.running(target, names, timeout=15)
        if running:
            raise TopoError(
                f"MirrorMaker 2 runs flow {spec.flow}: its status topic "
                f"{names.status_topic} on {spec.target} shows its {running[0]}; no "
                "position was written (stop it first)"
            )
        log = offset_syncs_topic(spec.source, spec.separator)
        reached = read_progress(target, log, spec.flow)
        ahead = further_on(mm2_state.resumes(target, spec.source, names, timeout=15), reached)
        if ahead:
            (topic, partition), at, stopped = ahead[0]
            raise TopoError(
                f"MirrorMaker 2 is further on than topo in flow {spec.flow} ({topic} "
                f"[{partition}]: MM2 resumes at {at}, topo stopped at {stopped}): it ran after "
                "topo; no position was written"
            )
        entries: list[tuple[bytes | None, bytes | None]] = [
            offset_record(spec.source, topic, partition, offset, names.connector)
            for (topic, partition), offset in sorted(reached.items())
            if offset > 0
        ]
        writes.append((spec, names, entries))
    for spec, names, entries in writes:
        if not entries:
            typer.echo(
                f"{spec.flow}: topo has copied nothing of it: MM2 starts it as it would a new flow",
                err=True,
            )
            continue
        topic = mm2_state.write_positions(configs[spec.target], names, entries)
        typer.echo(
            f"{spec.flow}: wrote where topo stopped, {len(entries)} partition(s), to "
            f"{topic} on {spec.target}: MM2 resumes there",
            err=True,
        )
