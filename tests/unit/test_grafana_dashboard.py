"""The Grafana dashboard (dashboards/grafana-topo.json) queries only the metrics the driver
exports (topology/telemetry/names.py), and every panel shows something."""

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from topology.telemetry.names import series_names

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboards" / "grafana-topo.json"
METRIC = re.compile(r"\btopo_[A-Za-z0-9_:]*")


def load() -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return dashboard


def panels(within: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every panel, a collapsed row's panels after the row."""
    for panel in within:
        yield panel
        yield from panels(panel.get("panels", []))


def queries(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, PromQL) of every panel target, annotation and template variable."""
    for panel in panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            yield f"{panel['title']} [{target['refId']}]", target["expr"]
    for annotation in dashboard["annotations"]["list"]:
        if "expr" in annotation:
            yield f"annotation {annotation['name']}", annotation["expr"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            yield f"${variable['name']}", query if isinstance(query, str) else query["query"]


def test_the_dashboard_is_a_grafana_dashboard() -> None:
    dashboard = load()
    assert dashboard["schemaVersion"] == 39
    assert [i["name"] for i in dashboard["__inputs"]] == ["DS_PROMETHEUS"]
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["flow"]["query"] == "label_values(topo_flow_up, flow)"


def test_every_query_names_only_catalogued_metrics() -> None:
    known = series_names()
    found = list(queries(load()))
    assert len(found) > 20
    for where, expr in found:
        named = set(METRIC.findall(expr))
        assert named, (where, expr)
        assert named <= known, (where, named - known)


def test_every_panel_has_a_query_on_the_prometheus_datasource() -> None:
    shown = [panel for panel in panels(load()["panels"]) if panel["type"] != "row"]
    assert len(shown) > 20
    for panel in shown:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip(), panel["title"]
            assert target["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]


def test_a_collapsed_row_holds_its_panels() -> None:
    rows = [panel for panel in load()["panels"] if panel["type"] == "row"]
    assert any(row["collapsed"] and row["panels"] for row in rows)
    assert all(row["panels"] == [] for row in rows if not row["collapsed"])


def test_panel_ids_are_unique() -> None:
    ids = [panel["id"] for panel in panels(load()["panels"])]
    assert len(ids) == len(set(ids))


def test_every_series_is_kept_to_the_chosen_topology() -> None:
    """The driver's metrics carry no owner: each is joined with the owner's topo_info on the
    scrape target (job, instance), as topology.dashboard.prometheus does."""
    join = 'on(job, instance) group_left() max by (job, instance) (topo_info{owner=~"$owner"})'
    for where, expr in queries(load()):
        if where.startswith("$"):
            continue
        selectors = METRIC.findall(expr.replace(join, ""))
        assert expr.count(join) == len(selectors) > 0, (where, expr)


def test_the_catalogue_is_charted() -> None:
    """Every metric of the catalogue appears in some query of the dashboard."""
    named = {name for _, expr in queries(load()) for name in METRIC.findall(expr)}
    base = {re.sub(r"_(bucket|sum|count)$", "", name) for name in named}
    missing = {
        name for name in series_names() if re.sub(r"_(bucket|sum|count)$", "", name) not in base
    }
    assert missing == set(), "chart these in dashboards/grafana-topo.json"
