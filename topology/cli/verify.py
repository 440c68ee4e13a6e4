"""`topo verify FILE`: prove that each replicated partition's target holds its source's records.

For each flow and each partition it copies: the window both sides still hold, the count and an
order-sensitive digest of each record's key, value, headers and timestamp on both sides, with
the flow's rules applied (its filter, the loop rules; aborted transactions are never read), and
the first source offset where they part (`ops/verify.py`). Exit 0 when every partition is
proven, 1 on a difference or an error, 2 when nothing differs but records are still to copy.
"""

import json
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from topology.ops.verify import Keeps

FORMATS = ("text", "json")


def verify(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    flows: Annotated[
        list[str] | None, typer.Option("--flow", help="Only this flow, as SOURCE->TARGET (repeat).")
    ] = None,
    topics: Annotated[
        list[str] | None, typer.Option("--topic", help="Only this source topic (repeat).")
    ] = None,
    output_format: Annotated[
        str, typer.Option("--format", help="text, or json (schemas/verify.schema.json).")
    ] = "text",
) -> None:
    """Prove, record by record, that the targets hold what the flows copied."""
    from topology.cli import live
    from topology.core.errors import TopoError
    from topology.core.jobs import specs_of
    from topology.core.plan.planner import replicated_topics
    from topology.core.render.verify import proofs_text
    from topology.core.verify import exit_code
    from topology.kafka.verify_port import KafkaVerify
    from topology.ops.verify import prove, tasks

    if output_format not in FORMATS:
        raise TopoError(f"--format must be text or json, not {output_format!r}")
    loaded = live.load(file)
    specs = specs_of(loaded.topology)
    known = {spec.flow for spec in specs}
    unknown = [flow for flow in flows or [] if flow not in known]
    if unknown:
        have = ", ".join(sorted(known)) or "none"
        raise TopoError(f"no flow {unknown[0]} in {file} (it has: {have})")
    chosen_specs = [spec for spec in specs if not flows or spec.flow in flows]
    configs = live.client_configs(loaded)
    clusters = live.observe(configs)
    maps = replicated_topics(loaded.topology, clusters)
    chosen = tasks(chosen_specs, maps, clusters, topics or ())
    if not chosen:
        raise TopoError("nothing to verify: no replicated partition matches (is the copy made?)")
    keeps = _filter_check() if any(task.spec.record_filter for task in chosen) else _no_filter
    finished = 0

    def done(_proof: object) -> None:
        nonlocal finished
        finished += 1
        typer.echo(f"verified {finished} of {len(chosen)} partition(s)", err=True)

    try:
        proofs = prove(chosen, KafkaVerify(configs), keeps, done)
    finally:
        stop = getattr(keeps, "stop", None)
        if stop is not None:
            stop()
    documents = [proof.to_dict() for proof in proofs]
    if output_format == "json":
        typer.echo(json.dumps({"partitions": documents, "exit": exit_code(proofs)}, indent=2))
    else:
        typer.echo(proofs_text(documents), nl=False)
    raise typer.Exit(exit_code(proofs))


def _filter_check() -> "Keeps":
    """Spark's SQL engine for the flows' filters (the `spark` extra)."""
    from topology.core.errors import TopoError

    try:
        from topology.spark.filter_check import FilterCheck
    except ImportError:
        raise TopoError(
            "a flow has a filter, which only Spark evaluates: install topo with the spark extra"
        ) from None
    return FilterCheck()


def _no_filter(*_args: object) -> list[bool]:
    raise AssertionError("asked to filter for a flow without a filter")
