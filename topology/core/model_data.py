"""The resolved topology as plain data, and back: what the jobs document carries to the driver.

The driver runs the jobs document `topo apply` published and never reads the topology file,
so the document holds the resolved topology the specs were made from (`to_data`), and the
driver rebuilds the same frozen values from it (`from_data`) without parsing or analysing
anything. What the file says only for people (comments, layout, positions) is not carried:
an edit of those changes nothing here. Secrets stay references (`${env:...}`, `${file:...}`);
a value written in the file where a secret belongs is refused (`LiteralSecretError`): the
document is published to a Kafka topic and must never hold one.
"""

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from topology.core import secrets
from topology.core.diagnostics import Span
from topology.core.errors import TopoError
from topology.core.model import (
    STORES,
    Cluster,
    Emit,
    Engine,
    Flow,
    FlowKind,
    FlowSettings,
    KeyStore,
    MetricsEndpoint,
    Mm2State,
    NameFilter,
    Naming,
    Objectives,
    Sasl,
    Security,
    Sync,
    Tls,
    Topology,
)

NOWHERE = Span("(jobs document)", 0, 0)


class LiteralSecretError(TopoError):
    """A secret written in the topology file, which the jobs document cannot carry."""


def to_data(topology: Topology, clusters: set[str] | None = None) -> dict[str, Any]:
    """The topology as JSON-ready data; only `clusters` (default: all) of its clusters."""
    kept = [c for name, c in topology.clusters.items() if clusters is None or name in clusters]
    return {
        "name": topology.name,
        "clusters": {cluster.name: cluster_data(cluster) for cluster in kept},
        "flows": [flow_data(flow) for flow in topology.flows],
        "engine": engine_data(topology.engine),
    }


WRITTEN_OUT = "(a secret written in the file)"


def cluster_data(cluster: Cluster, masked: bool = False) -> dict[str, Any]:
    """How to reach a cluster: its bootstrap, security and client settings, secrets as the
    references the file gives. A secret written out is LiteralSecretError, or with `masked`
    (for a plan to show) WRITTEN_OUT in its place."""

    def secret(key: str, value: Any) -> Any:
        if _is_literal(value):
            if masked:
                return WRITTEN_OUT
            raise LiteralSecretError(
                f"cluster {cluster.name}: {key} is written in the file; replication needs it as "
                "a reference (${env:NAME} or ${file:path}): the jobs document the driver runs "
                "is published to topo-runs.internal and never holds a secret"
            )
        return value

    security = cluster.security
    client = {
        key: secret(f"client.{key}", value) if secrets.is_secret_key(key) else value
        for key, value in sorted(cluster.client.items())
    }
    found: dict[str, Any] = {
        "bootstrap": cluster.bootstrap,
        "security": {"protocol": security.protocol},
        "client": client,
        "topics": list(cluster.topics),
    }
    if cluster.roles:  # only where set: a cluster without them has the data it had before
        found["roles"] = roles_data(cluster.roles)
    if security.sasl is not None:
        sasl = security.sasl
        found["security"]["sasl"] = {
            "mechanism": sasl.mechanism,
            "username": sasl.username,
            "password": secret("security.sasl.password", sasl.password),
        }
    if security.tls is not None:
        tls = security.tls
        found["security"]["tls"] = {
            "ca": tls.ca,
            "cert": tls.cert,
            "key": tls.key,
            "key_password": secret("security.tls.key_password", tls.key_password),
            "verify_hostname": tls.verify_hostname,
        }
        for kind, store in tls.stores():  # only where set, as roles
            setting = f"security.tls.{kind}"
            found["security"]["tls"][kind] = {
                "path": store.path,
                "password": secret(f"{setting}.password", store.password),
                "type": store.type,
                "key_password": secret(f"{setting}.key_password", store.key_password),
            }
    return found


def _is_literal(value: Any) -> bool:
    """A secret's value written out, rather than absent or a reference."""
    if value is None or isinstance(value, bool):
        return False
    return not (isinstance(value, str) and secrets.reference(value) is not None)


def roles_data(roles: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Client settings by role, sorted, without empty roles."""
    return {role: dict(sorted(given.items())) for role, given in sorted(roles.items()) if given}


def settings_data(settings: FlowSettings) -> dict[str, Any]:
    """The settings as plain data; `objectives` only where any differs from the defaults, so
    a flow without objectives has the data it had before they existed."""
    found = {
        "topics": settings.topics.to_dict(),
        "groups": settings.groups.to_dict(),
        "naming": str(settings.naming),
        "separator": settings.separator,
        "internal_separator": settings.internal_separator,
        "replication_factor": settings.replication_factor,
        "sync": {
            "configs": settings.sync.configs,
            "partitions": settings.sync.partitions,
            "acls": settings.sync.acls,
            "group_offsets": settings.sync.group_offsets,
        },
        "emit": {"heartbeats": settings.emit.heartbeats, "checkpoints": settings.emit.checkpoints},
        "config_exclude": list(settings.config_exclude),
        "delivery": settings.delivery,
        "start": settings.start,
        "filter": settings.filter,
        "provenance": settings.provenance,
        "on_loss": settings.on_loss,
        "tasks": settings.tasks,
        "paused": settings.paused,
        "mm2": {
            "offsets_topic": settings.mm2.offsets_topic,
            "status_topic": settings.mm2.status_topic,
            "connector": settings.mm2.connector,
        },
    }
    objectives = objectives_data(settings.objectives)
    if objectives:
        found["objectives"] = objectives
    if roles_data(settings.roles):  # only where set, as objectives
        found["roles"] = roles_data(settings.roles)
    return found


def objectives_data(objectives: Objectives) -> dict[str, Any]:
    """The objectives set to other than their defaults."""
    return {
        each.name: getattr(objectives, each.name)
        for each in fields(objectives)
        if getattr(objectives, each.name) != each.default
    }


def flow_data(flow: Flow) -> dict[str, Any]:
    return {
        "index": flow.index,
        "kind": str(flow.kind),
        "sources": list(flow.sources),
        "targets": list(flow.targets),
        "settings": settings_data(flow.settings),
    }


def engine_data(engine: Engine) -> dict[str, Any]:
    metrics = engine.metrics
    found: dict[str, Any] = {
        "runner": engine.runner,
        "master": engine.master,
        "spark_conf": dict(sorted(engine.spark_conf.items())),
        "checkpoints": engine.checkpoints,
        "state_cluster": engine.state_cluster,
        "metrics": None
        if metrics is None
        else {"bind": metrics.bind, "port": metrics.port, "ready_lag": metrics.ready_lag},
    }
    if engine.intervals:  # only where set: an engine without them has the data it had before
        found["intervals"] = dict(sorted(engine.intervals.items()))
    return found


def from_data(data: Mapping[str, Any], file: str) -> Topology:
    """The topology `to_data` gave, as frozen values; `file` stands for where it came from
    (relative `${file:...}` references are read from its folder). KeyError, TypeError or
    ValueError for data of another shape: the caller says whose."""
    clusters = {
        str(name): _cluster(str(name), value) for name, value in dict(data["clusters"]).items()
    }
    flows = tuple(_flow(value) for value in data["flows"])
    return Topology(file, clusters, flows, str(data["name"]), _engine(data["engine"]))


def _cluster(name: str, data: Mapping[str, Any]) -> Cluster:
    security = data["security"]
    sasl, tls = security.get("sasl"), security.get("tls")
    return Cluster(
        name=name,
        bootstrap=str(data["bootstrap"]),
        security=Security(
            protocol=str(security["protocol"]),
            sasl=None if sasl is None else _sasl(sasl),
            tls=None if tls is None else _tls(tls),
        ),
        client=dict(data["client"]),
        topics=tuple(data["topics"]),
        span=NOWHERE,
        roles={role: dict(given) for role, given in data.get("roles", {}).items()},
    )


def _sasl(data: Mapping[str, Any]) -> Sasl:
    return Sasl(str(data["mechanism"]), data["username"], data["password"])


def _tls(data: Mapping[str, Any]) -> Tls:
    stores = {kind: KeyStore(**data[kind]) for kind in STORES if kind in data}
    return Tls(
        data["ca"],
        data["cert"],
        data["key"],
        data["key_password"],
        bool(data["verify_hostname"]),
        **stores,
    )


def _filter(data: Mapping[str, Any]) -> NameFilter:
    return NameFilter(tuple(data["include"]), tuple(data["exclude"]))


def _settings(data: Mapping[str, Any]) -> FlowSettings:
    return FlowSettings(
        topics=_filter(data["topics"]),
        groups=_filter(data["groups"]),
        naming=Naming(data["naming"]),
        separator=str(data["separator"]),
        internal_separator=bool(data["internal_separator"]),
        replication_factor=data["replication_factor"],
        sync=Sync(**data["sync"]),
        emit=Emit(**data["emit"]),
        config_exclude=tuple(data["config_exclude"]),
        delivery=str(data["delivery"]),
        start=str(data["start"]),
        filter=data["filter"],
        provenance=bool(data["provenance"]),
        on_loss=str(data.get("on_loss", "alert")),  # absent before on_loss existed
        tasks=data.get("tasks"),  # absent before copy slots were a setting
        paused=bool(data.get("paused", False)),
        roles={role: dict(given) for role, given in data.get("roles", {}).items()},
        mm2=Mm2State(**data["mm2"]),
        # A jobs document published before objectives existed has none.
        objectives=Objectives(**data.get("objectives", {})),
    )


def _flow(data: Mapping[str, Any]) -> Flow:
    return Flow(
        index=int(data["index"]),
        kind=FlowKind(data["kind"]),
        sources=tuple(data["sources"]),
        targets=tuple(data["targets"]),
        settings=_settings(data["settings"]),
        span=NOWHERE,
    )


def _engine(data: Mapping[str, Any]) -> Engine:
    metrics = data["metrics"]
    return Engine(
        runner=str(data["runner"]),
        master=str(data["master"]),
        spark_conf=dict(data["spark_conf"]),
        checkpoints=data["checkpoints"],
        state_cluster=data["state_cluster"],
        metrics=None if metrics is None else MetricsEndpoint(**metrics),
        intervals={str(k): float(v) for k, v in data.get("intervals", {}).items()},
    )
