"""`topo plan FILE`: what apply would change on the live clusters, without changing anything."""

import json
from enum import StrEnum
from typing import Annotated, Any

import typer

EXIT_OK = 0
EXIT_CHANGES = 2


class Format(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


def render(data: dict[str, Any], output: Format) -> str:
    """The plan document as text, markdown or JSON; every form reads the same dict."""
    from topology.core.render import plan_markdown, plan_text

    if output is Format.JSON:
        return json.dumps(data, indent=2) + "\n"
    if output is Format.MARKDOWN:
        return plan_markdown.render(data)
    return plan_text.render(data)


def _jobs(topology: Any, topics: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    from topology.core.jobs import specs_of

    return [
        {**spec.to_dict(), "digest": spec.digest, "topics_now": topics.get(spec.flow, {})}
        for spec in specs_of(topology)
    ]


def plan(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    output: Annotated[Format, typer.Option("--format", help="text, json or markdown.")] = (
        Format.TEXT
    ),
    out: Annotated[
        str | None, typer.Option("-o", "--out", help="Also save the plan (JSON) for apply.")
    ] = None,
    allow_delete: Annotated[
        bool,
        typer.Option(
            "--allow-delete", help="Plan deleting topics and ACLs topo made that no flow needs."
        ),
    ] = False,
    detailed_exitcode: Annotated[
        bool,
        typer.Option("--detailed-exitcode", help="Exit 0: no changes, 2: changes, 1: error."),
    ] = False,
    show_jobs: Annotated[
        bool,
        typer.Option(
            "--show-jobs",
            help="Also show each flow's replication job: its rules and the topics it copies now.",
        ),
    ] = False,
) -> None:
    """Compare the topology with the live clusters and show the changes apply would make."""
    from topology.cli import live
    from topology.cli.files import write_text

    loaded = live.load(file)
    configs = live.client_configs(loaded)
    clusters = live.observe(configs)
    result = live.make_plan(loaded, clusters, allow_delete, configs)
    data = result.to_dict()
    if show_jobs:
        from topology.core.plan.planner import replicated_topics

        data["jobs"] = _jobs(loaded.topology, replicated_topics(loaded.topology, clusters))
    typer.echo(render(data, output), nl=False)
    if out is not None:
        write_text(out, json.dumps(data, indent=2) + "\n")
        typer.echo(f"Saved the plan to {out}; run `topo apply {out}` to apply it.", err=True)
    if detailed_exitcode and not result.empty:
        raise typer.Exit(EXIT_CHANGES)
    raise typer.Exit(EXIT_OK)
