"""`topo export alerts`: a topology's objectives as Prometheus alerting rules (docs/objectives.md).

Pure. Every rule reads the metrics the driver exports (topology/telemetry/names.py), kept to this
topology's driver by its `owner` (`topo_info`), as the Grafana dashboard does, and judges what
the driver judges (topology/core/objectives.py): an objective's measure past its bound for the
objective's `for_seconds`. Beside the objectives, two rules every topology gets: its driver is
not scraped, and a flow is not running.
"""

import io
import json
from typing import Any

from ruamel.yaml import YAML

from topology.core.model import Edge, Objectives, Topology

SEVERITY = "warning"
DOWN_SEVERITY = "critical"
# The measure of each objective over one flow: how its series are aggregated, and the metric
# (a counter's rate over a minute, as the driver measures throughput).
MEASURES = {
    "lag_seconds": ("max", "topo_replication_lag_seconds"),
    "lag_records": ("sum", "topo_replication_lag_records"),
    "heartbeat_age_seconds": ("max", "topo_heartbeat_age_seconds"),
    "checkpoint_age_seconds": ("min", "topo_checkpoint_age_seconds"),
    "min_records_per_second": ("sum", "rate(topo_records_copied_total[1m])"),
}
SAYS = {
    "lag_seconds": "is {{ $value | humanizeDuration }} behind (objective: at most {bound}s)",
    "lag_records": "has {{ $value }} records waiting (objective: at most {bound})",
    "heartbeat_age_seconds": (
        "copied no heartbeat for {{ $value | humanizeDuration }} (objective: at most {bound}s)"
    ),
    "checkpoint_age_seconds": (
        "wrote no checkpoint for {{ $value | humanizeDuration }} (objective: at most {bound}s)"
    ),
    "min_records_per_second": (
        "copies {{ $value | humanize }} records/s while records wait (objective: at least {bound})"
    ),
}


class NoMetricsError(ValueError):
    """The topology's driver exports no metrics (`engine.metrics: false`): nothing to alert on."""


def rule_groups(topology: Topology) -> dict[str, Any]:
    """The rules file's content: one group named after the topology."""
    if topology.engine.metrics is None:
        raise NoMetricsError(
            "engine.metrics is false: the driver exports no metrics to alert on; "
            "remove `metrics: false` first"
        )
    owner = topology.name
    edges = topology.edges()
    waits = [edge.settings.objectives.for_seconds for edge in edges] or [Objectives().for_seconds]
    rules: list[dict[str, Any]] = [
        {
            "alert": "TopoDriverAbsent",
            "expr": f"absent(topo_info{{owner={_quoted(owner)}}})",
            "for": _duration(min(waits)),
            "labels": {"severity": DOWN_SEVERITY, "owner": owner},
            "annotations": {
                "summary": f"topo: the replication driver of {owner} is not scraped",
                "description": (
                    f"No driver of {owner} answers Prometheus: nothing of its flows is copied "
                    "or measured. `topo status` says whether it runs."
                ),
            },
        }
    ]
    for edge in edges:
        rules.append(_down(owner, edge))
        for objective, bound in edge.settings.objectives.declared().items():
            rules.append(_objective(owner, edge, objective, bound))
    return {"groups": [{"name": f"topo-{owner}", "rules": rules}]}


def prometheus_rule(topology: Topology) -> dict[str, Any]:
    """The same groups as a PrometheusRule resource of the Prometheus Operator."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": f"topo-{_resource_name(topology.name)}",
            "labels": {"app.kubernetes.io/name": "topo", "topo.owner": topology.name},
        },
        "spec": rule_groups(topology),
    }


def text(document: dict[str, Any]) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 4096  # an expression on one line
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def _down(owner: str, edge: Edge) -> dict[str, Any]:
    expr = f"max by (flow) ({_scoped('topo_flow_up', owner, edge)}) == 0"
    return {
        "alert": "TopoFlowDown",
        "expr": expr,
        "for": _duration(edge.settings.objectives.for_seconds),
        "labels": {"severity": DOWN_SEVERITY, "owner": owner, "flow": edge.name},
        "annotations": {
            "summary": f"topo: {edge.name} is not copying",
            "description": (
                f"The flow {edge.name} of {owner} is starting, restarting, waiting or failed; "
                "`topo status` says which and why."
            ),
        },
    }


def _objective(owner: str, edge: Edge, objective: str, bound: float) -> dict[str, Any]:
    measure = _measure(objective, owner, edge)
    shown = _number(bound)
    if objective == "min_records_per_second":
        waiting = _measure("lag_records", owner, edge)
        expr = f"{measure} < {shown} and on (flow) {waiting} > 0"
    else:
        expr = f"{measure} > {shown}"
    return {
        "alert": "TopoObjectiveBreached",
        "expr": expr,
        "for": _duration(edge.settings.objectives.for_seconds),
        "labels": {
            "severity": SEVERITY,
            "owner": owner,
            "flow": edge.name,
            "objective": objective,
        },
        "annotations": {
            "summary": f"topo: {edge.name} breaks its {objective} objective",
            "description": f"{edge.name} " + SAYS[objective].replace("{bound}", shown),
        },
    }


def _measure(objective: str, owner: str, edge: Edge) -> str:
    aggregate, metric = MEASURES[objective]
    return f"{aggregate} by (flow) ({_scoped(metric, owner, edge)})"


def _scoped(metric: str, owner: str, edge: Edge) -> str:
    """The metric (or a counter's rate) of one flow, kept to the series of this owner's
    driver."""
    where = f"{{flow={_quoted(edge.name)}}}"
    selected = metric.replace("[", f"{where}[", 1) if "[" in metric else metric + where
    return (
        f"{selected} * on (job, instance) group_left () "
        f"max by (job, instance) (topo_info{{owner={_quoted(owner)}}})"
    )


def _quoted(value: str) -> str:
    return json.dumps(value)  # PromQL's double-quoted strings take JSON's escapes


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m" if whole and whole % 60 == 0 else f"{whole}s"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _resource_name(owner: str) -> str:
    """A Kubernetes object name (RFC 1123 label) from the owner."""
    cleaned = "".join(c if c.isalnum() else "-" for c in owner.lower()).strip("-")
    return cleaned[:56] or "topology"
