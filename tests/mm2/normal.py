"""Semantic forms for the MM2 round-trip tests: what a topology or an MM2 config *does*.

Two topologies are equal here when they replicate the same way: the same clusters (connection,
security, client properties) and the same directed edges with the same settings. How the edges
are grouped into flows (two mirrors or one active-active pair) and where values sit (defaults
or the flow) do not count; spans do not count.
"""

import dataclasses
from pathlib import Path
from typing import Any

from topology.analysis import analyse
from topology.mm2 import yaml_out
from topology.mm2.exporter import export
from topology.mm2.importer import import_properties
from topology.model import Topology

SAMPLES = Path(__file__).parent / "samples"


def topology_of(text: str, file: str = "topology.yaml") -> Topology:
    analysis = analyse(text, file)
    errors = [d.headline() for d in analysis.diagnostics if d.severity.value == "error"]
    assert not errors, errors
    assert analysis.topology is not None
    return analysis.topology


def imported(text: str, file: str = "mm2.properties") -> str:
    """The properties imported to topology YAML text (asserting the import succeeded)."""
    result = import_properties(text, file)
    errors = [d.headline() for d in result.diagnostics if d.severity.value == "error"]
    assert result.data is not None, errors
    return yaml_out.render(result.data)


def exported(text: str, file: str = "topology.yaml") -> str:
    return export(topology_of(text, file), file).text


def normal(topology: Topology) -> dict[str, Any]:
    clusters = {
        name: {
            "bootstrap": cluster.bootstrap,
            "security": dataclasses.asdict(cluster.security),
            "client": {
                key: str(value).lower() if isinstance(value, bool) else str(value)
                for key, value in cluster.client.items()
            },
        }
        for name, cluster in topology.clusters.items()
    }
    edges = {(edge.source, edge.target): _settings(edge.settings) for edge in topology.edges()}
    return {"clusters": clusters, "edges": edges}


def _settings(settings: Any) -> dict[str, Any]:
    return {
        field.name: (dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value)
        for field in dataclasses.fields(settings)
        for value in [getattr(settings, field.name)]
    }
