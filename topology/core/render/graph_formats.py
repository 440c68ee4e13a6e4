"""The replication graph as Mermaid, Graphviz DOT or JSON; all three read `graph_dict`."""

import json
from typing import Any

from topology.core.flow_graph import TopologyGraph
from topology.core.model import Edge, Naming
from topology.core.reach import Reach


def graph_dict(graph: TopologyGraph, reach: Reach) -> dict[str, Any]:
    """The machine form (schemas/graph.schema.json): clusters, edges, and remote topics."""
    return {
        "format_version": "1",
        "clusters": [
            {"name": c.name, "bootstrap": c.bootstrap, "owned_topics": list(c.topics)}
            for c in graph.topology.clusters.values()
        ],
        "edges": [_edge(edge, graph) for edge in graph.edges()],
        "remote_topics": {
            cluster: [
                {
                    "names": arrival.describe(),
                    "exact": sorted(arrival.names) if arrival.names is not None else None,
                    "origin": arrival.origin,
                    "path": list(arrival.path),
                }
                for arrival in reach.on(cluster)
            ]
            for cluster in graph.clusters
        },
        "complete": not reach.truncated,
    }


def _edge(edge: Edge, graph: TopologyGraph) -> dict[str, Any]:
    flow = graph.flow(edge)
    return {
        "source": edge.source,
        "target": edge.target,
        "flow": flow.index,
        "flow_name": flow.name,
        "kind": flow.kind.value,
        "naming": edge.settings.naming.value,
        "separator": edge.settings.separator,
        "topics": edge.settings.topics.to_dict(),
        "merges": edge.merges,
    }


def as_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2)


def _label(edge: dict[str, Any]) -> str:
    include = ", ".join(edge["topics"]["include"])
    return include if edge["naming"] == Naming.PREFIX.value else f"{include} (identity)"


def as_mermaid(data: dict[str, Any]) -> str:
    """A `flowchart LR`; identity edges are dotted, merging (fan-in) edges thick."""
    lines = ["flowchart LR"]
    for cluster in data["clusters"]:
        lines.append(f'  {_node(cluster["name"])}[("{cluster["name"]}")]')
    for edge in data["edges"]:
        arrow = "==>" if edge["merges"] else ("-.->" if edge["naming"] == "identity" else "-->")
        label = _label(edge).replace('"', "#quot;")
        lines.append(f'  {_node(edge["source"])} {arrow}|"{label}"| {_node(edge["target"])}')
    return "\n".join(lines) + "\n"


def _node(name: str) -> str:
    # Mermaid reserves words such as `end`; a prefixed id never clashes.
    return "c_" + name.replace("-", "_")


def as_dot(data: dict[str, Any]) -> str:
    lines = ["digraph topology {", "  rankdir=LR;", "  node [shape=cylinder];"]
    for cluster in data["clusters"]:
        lines.append(f"  {_quote(cluster['name'])};")
    for edge in data["edges"]:
        style = ', style="dashed"' if edge["naming"] == "identity" else ""
        style += ", penwidth=2" if edge["merges"] else ""
        lines.append(
            f"  {_quote(edge['source'])} -> {_quote(edge['target'])} "
            f"[label={_quote(_label(edge))}{style}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
