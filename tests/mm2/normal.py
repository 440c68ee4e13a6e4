"""Semantic forms for the MM2 round-trip tests: what a topology or an MM2 config *does*.

Two topologies are equal here when they replicate the same way: the same clusters (connection,
security, client properties) and the same directed edges with the same settings. How the edges
are grouped into flows (two mirrors or one active-active pair) and where values sit (defaults
or the flow) do not count; spans do not count.
"""

import dataclasses
import re
from pathlib import Path
from typing import Any

from topology.core.analysis import analyse
from topology.core.mm2 import yaml_out
from topology.core.mm2.exporter import export
from topology.core.mm2.importer import import_properties
from topology.core.model import Topology

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
        field.name: (
            dataclasses.asdict(value)
            if dataclasses.is_dataclass(value) and not isinstance(value, type)
            else value
        )
        for field in dataclasses.fields(settings)
        for value in [getattr(settings, field.name)]
    }


# -- what an MM2 config does ------------------------------------------------------------------

# MM2's connector settings topo maps, with MM2's defaults (MirrorSourceConfig and friends).
_MM2_SETTINGS = {
    "topics": ".*",
    "topics.exclude": r".*[\-\.]internal, .*\.replica, __.*",
    "groups": ".*",
    "groups.exclude": "console-consumer-.*, connect-.*, __.*",
    "replication.factor": "2",
    "replication.policy.class": "DefaultReplicationPolicy",
    "replication.policy.separator": ".",
    "sync.topic.configs.enabled": "true",
    "sync.topic.acls.enabled": "true",
    "sync.group.offsets.enabled": "false",
    "refresh.topics.enabled": "true",
    "emit.heartbeats.enabled": "true",
    "emit.checkpoints.enabled": "true",
    "config.properties.exclude": (
        r"follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, "
        r"message\.timestamp\.difference\.max\.ms, message\.timestamp\.type, "
        r"unclean\.leader\.election\.enable, min\.insync\.replicas"
    ),
}
_OLD = {
    "topics.exclude": "topics.blacklist",
    "groups.exclude": "groups.blacklist",
    "config.properties.exclude": "config.properties.blacklist",
}
_LISTS = {"topics", "topics.exclude", "groups", "groups.exclude", "config.properties.exclude"}


def effective_mm2(text: str) -> dict[str, Any]:
    """What MM2 does with a config, written independently of the importer: per enabled flow
    the settings topo maps (flow over global over MM2's default), per cluster its connection.
    Secret values are reduced to whether they are set: an import moves them elsewhere."""
    from topology.core.mm2 import properties

    entries, problems = properties.parse(text)
    assert problems == []
    props = {entry.key: entry.value.strip() for entry in entries}
    clusters = [c.strip() for c in props["clusters"].split(",")]

    def lookup(flow: str, key: str) -> str | None:
        for name in (key, _OLD.get(key)):
            if name is None:
                continue
            for candidate in (f"{flow}.{name}", name):
                if candidate in props:
                    return props[candidate]
        return None

    flows = {}
    for source in clusters:
        for target in clusters:
            flow = f"{source}->{target}"
            if source == target or props.get(f"{flow}.enabled", "").lower() != "true":
                continue
            settings: dict[str, Any] = {}
            for key, default in _MM2_SETTINGS.items():
                value = lookup(flow, key) or default
                if key == "config.properties.exclude":  # config names: escaping is style
                    settings[key] = sorted(_plain(v) for v in value.split(",") if v.strip())
                elif key in _LISTS:
                    settings[key] = sorted(v.strip() for v in value.split(",") if v.strip())
                elif key == "replication.policy.class":
                    settings[key] = value.rsplit(".", 1)[-1]
                else:
                    settings[key] = value.lower()
            settings["start"] = (
                props.get(f"{flow}.consumer.auto.offset.reset")
                or props.get(f"{source}.consumer.auto.offset.reset")
                or "earliest"
            )
            settings["exactly_once"] = props.get(f"{target}.exactly.once.source.support")
            flows[(source, target)] = settings
    return {"clusters": {c: _cluster(props, c) for c in clusters}, "flows": flows}


def _cluster(props: dict[str, str], name: str) -> dict[str, Any]:
    def get(key: str) -> str | None:
        return props.get(f"{name}.{key}", props.get(key))

    jaas = get("sasl.jaas.config") or ""
    user = re.search(r'username="([^"]*)"', jaas)
    return {
        "bootstrap": (get("bootstrap.servers") or "").replace(" ", ""),
        "protocol": get("security.protocol") or "PLAINTEXT",
        "mechanism": get("sasl.mechanism"),
        "username": user.group(1) if user else None,
        "password set": 'password="' in jaas,
        "truststore": get("ssl.truststore.location"),
        "keystore": get("ssl.keystore.location"),
    }


def _plain(regex: str) -> str:
    """A config name regex with escaped dots as dots: `min\\.insync` equals `min.insync`."""
    return regex.strip().replace("\\.", ".")
