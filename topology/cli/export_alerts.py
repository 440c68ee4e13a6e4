"""`topo export alerts FILE.yaml [--format rules|operator] [-o OUT.yaml]`: a topology's
objectives as Prometheus alerting rules (docs/objectives.md)."""

from typing import Annotated

import typer

from topology.cli.export_mm2 import export_app


@export_app.command("alerts")
def alerts(
    file: Annotated[str, typer.Argument(help="Topology file (- for standard input).")],
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="rules: a Prometheus rules file (rule_files:); operator: a PrometheusRule "
            "resource for the Prometheus Operator.",
        ),
    ] = "rules",
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Export the flows' objectives as Prometheus alerting rules.

    One rule per objective per direction (TopoObjectiveBreached, labelled with the flow and the
    objective), one per direction that is not running (TopoFlowDown) and one for a driver that
    is not scraped (TopoDriverAbsent). The rules judge what the running driver judges on
    /readyz and in `topo status`. Exit 1 when the topology has errors: nothing is written.
    """
    from topology.cli.files import read_text, write_text
    from topology.cli.report import show
    from topology.core.analysis import analyse
    from topology.core.errors import TopoError
    from topology.core.render import alerts as render_alerts
    from topology.core.render import diagnostics as render

    if output_format not in ("rules", "operator"):
        raise TopoError(f"--format {output_format!r}: expected rules or operator")
    analysis = analyse(read_text(file), file)
    show(analysis.diagnostics, analysis.document)
    if not analysis.ok or analysis.topology is None:
        typer.echo(f"{render.summary(file, analysis.diagnostics)}; nothing exported", err=True)
        raise typer.Exit(1)
    topology = analysis.topology
    try:
        made = (
            render_alerts.rule_groups(topology)
            if output_format == "rules"
            else render_alerts.prometheus_rule(topology)
        )
    except render_alerts.NoMetricsError as problem:
        raise TopoError(f"{file}: {problem}") from None
    text = render_alerts.text(made)
    if output is None:
        typer.echo(text, nl=False)
    else:
        write_text(output, text)
    count = sum(len(group["rules"]) for group in (made.get("spec") or made)["groups"])
    objectives = sum(len(e.settings.objectives.declared()) for e in topology.edges())
    typer.echo(
        f"{file}: exported {count} alerting rule{'' if count == 1 else 's'} "
        f"({objectives} for objectives)" + (f" into {output}" if output else ""),
        err=True,
    )
