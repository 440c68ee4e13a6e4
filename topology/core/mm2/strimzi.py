"""A Strimzi `KafkaMirrorMaker2` resource -> the MM2 properties it stands for.

Strimzi runs MM2's three connectors on a Kafka Connect cluster it deploys, with configurations
it builds from the resource: each cluster's `bootstrapServers`, `tls` and `authentication`
become the connectors' `source.cluster.*` / `target.cluster.*` client settings, each mirror's
patterns and connector `config` the connectors' own. Read here as the dedicated-mode
properties of the same replication (see `stand_in`), so `topo import strimzi` maps, warns and
keeps secrets out exactly as `topo import mm2` does.

Both layouts are read: `spec.clusters` with `connectCluster` and `mirrors[].sourceCluster` /
`targetCluster` (v1beta2), and `spec.target` with `mirrors[].source` (the v1 API). Secrets
stay in Kubernetes: a password becomes an environment variable (a `secretKeyRef` where topo
runs in Kubernetes), and a certificate or key a file under `SECRETS_FOLDER/<secret>/<key>`
(where the Secret is mounted).
"""

import re
from typing import Any

from topology.core import intervals
from topology.core.connection import OAUTH_MODULE
from topology.core.diagnostics import Diagnostic
from topology.core.mm2 import references
from topology.core.mm2.stand_in import Gathered, StandIn, text
from topology.core.source import Document, Path, parse

KIND = "KafkaMirrorMaker2"
SECRETS_FOLDER = "/etc/topo/secrets"
# Where Strimzi's Connect cluster keeps its state unless the connect cluster's config says.
CONNECT_STATE_DEFAULTS = {
    "offset.storage.topic": "mirrormaker2-cluster-offsets",
    "status.storage.topic": "mirrormaker2-cluster-status",
}
CONNECTOR_NAME = "{source}->{target}.MirrorSourceConnector"
_SASL = {
    "scram-sha-256": "SCRAM-SHA-256",
    "scram-sha-512": "SCRAM-SHA-512",
    "plain": "PLAIN",
    "oauth": "OAUTHBEARER",
}
_PATTERNS = {
    "topicsPattern": "topics",
    "topicsExcludePattern": "topics.exclude",
    "topicsBlacklistPattern": "topics.blacklist",
    "groupsPattern": "groups",
    "groupsExcludePattern": "groups.exclude",
    "groupsBlacklistPattern": "groups.blacklist",
}
# The connectors of a mirror, and the MM2 property that turns one off when it is not there.
_CONNECTORS = {
    "sourceConnector": None,
    "checkpointConnector": "emit.checkpoints.enabled",
    "heartbeatConnector": "emit.heartbeats.enabled",
}
# How the pods run, not what they copy: topo runs its own way (docs/service.md).
_DEPLOYMENT = {
    "version",
    "replicas",
    "image",
    "resources",
    "livenessProbe",
    "readinessProbe",
    "jvmOptions",
    "jmxOptions",
    "logging",
    "clientRackInitImage",
    "rack",
    "tracing",
    "template",
    "externalConfiguration",
    "metricsConfig",
}
_CLUSTER_FIELDS = {"alias", "bootstrapServers", "tls", "authentication", "config"}
# The v1 target's Connect settings: where it keeps MM2's state (read), and the rest.
_STATE_FIELDS = {"offsetStorageTopic", "statusStorageTopic"}
_WORKER_FIELDS = {"groupId", "configStorageTopic"}
_OAUTH_KEPT = {"type", "tokenEndpointUri", "clientId", "clientSecret", "scope"}
_OAUTH_OTHER_GRANTS = ("accessToken", "refreshToken", "passwordSecret", "clientAssertion")
_DOCUMENT_START = re.compile(r"^---(?:[ \t]+#.*|[ \t]*)$", re.MULTILINE)


def read(source_text: str, file: str) -> StandIn:
    documents = _documents(source_text, file)
    found = [d for d, _ in documents if isinstance(d.data, dict) and d.data.get("kind") == KIND]
    first = found[0] if found else documents[0][0]
    stand_in = StandIn(file, first)
    for _, problems in documents:
        stand_in.diagnostics.extend(problems)
    if stand_in.diagnostics:
        return stand_in
    if not found:
        kinds = sorted({str(d.data.get("kind")) for d, _ in documents if isinstance(d.data, dict)})
        stand_in.error(
            "M022",
            f"{file} holds no {KIND} resource"
            + (f" (it holds {', '.join(kinds)})" if kinds else "")
            + "; topo import strimzi reads Strimzi's MirrorMaker 2 resource",
            (),
        )
        return stand_in
    if len(found) > 1:
        names = ", ".join(_name(d.data) for d in found)
        stand_in.error(
            "M022",
            f"{file} holds {len(found)} {KIND} resources ({names}); import one at a time, each "
            "into its own topology",
            (),
        )
        return stand_in
    _Resource(stand_in, first.data).run()
    return stand_in


def _documents(source_text: str, file: str) -> list[tuple[Document, list[Diagnostic]]]:
    """Each YAML document of a Kubernetes manifest, parsed with the file's line numbers (the
    lines before it are kept blank)."""
    starts = [0, *(match.start() for match in _DOCUMENT_START.finditer(source_text))]
    documents: list[tuple[Document, list[Diagnostic]]] = []
    for begin, end in zip(starts, [*starts[1:], len(source_text)], strict=True):
        part = source_text[begin:end]
        if begin > 0:
            part = part.split("\n", 1)[1] if "\n" in part else ""
            lines_before = source_text.count("\n", 0, begin) + 1
            part = "\n" * lines_before + part
        if part.strip() or not documents:
            documents.append(parse(part, file))
    return documents


def _name(data: dict[str, Any]) -> str:
    metadata = data.get("metadata")
    return str(metadata.get("name")) if isinstance(metadata, dict) else "(no name)"


class _Resource:
    def __init__(self, stand_in: StandIn, data: dict[str, Any]) -> None:
        self.out = stand_in
        self.data = data
        self.spec: dict[str, Any] = {}
        self.gathered = Gathered(stand_in)

    def run(self) -> None:
        spec = self.data.get("spec")
        if not isinstance(spec, dict):
            self.out.error("M022", f"this {KIND} has no spec: there is nothing to import", ())
            return
        self.spec = spec
        self.out.notes.append(f"Strimzi {KIND} {_name(self.data)}.")
        clusters, connect_cluster = self._clusters()
        if not clusters:
            return
        self.out.put("clusters", ", ".join(clusters), ("spec",))
        for alias, at in clusters.items():
            self._cluster(alias, at, connect=alias == connect_cluster)
        for index, mirror in enumerate(self._list(("spec", "mirrors"))):
            self._mirror(index, mirror, connect_cluster)
        self.gathered.write()
        for key in spec:
            self._spec_key(key)

    # -- clusters ------------------------------------------------------------------------------

    def _clusters(self) -> tuple[dict[str, Path], str | None]:
        """Each cluster's alias and where its settings are, and the Connect cluster's alias."""
        found: dict[str, Path] = {}
        if "target" in self.spec:  # v1: the target is the Connect cluster
            target = self._alias(("spec", "target"))
            if target is not None:
                found[target] = ("spec", "target")
            for index, mirror in enumerate(self._list(("spec", "mirrors"))):
                if isinstance(mirror, dict) and "source" in mirror:
                    at: Path = ("spec", "mirrors", index, "source")
                    alias = self._alias(at)
                    if alias is not None:
                        found.setdefault(alias, at)
            return found, target
        for index, _ in enumerate(self._list(("spec", "clusters"))):
            at = ("spec", "clusters", index)
            alias = self._alias(at)
            if alias is not None:
                found[alias] = at
        if not found:
            self.out.error("M003", f"this {KIND} names no clusters (spec.clusters)", ("spec",))
        connect = self.spec.get("connectCluster")
        return found, str(connect) if connect is not None else None

    def _alias(self, at: Path) -> str | None:
        cluster = self._get(at)
        if not isinstance(cluster, dict) or not text(cluster.get("alias")).strip():
            self.out.error("M004", "a cluster here has no alias", at)
            return None
        return text(cluster["alias"]).strip()

    def _cluster(self, alias: str, at: Path, *, connect: bool) -> None:
        cluster = self._get(at)
        if "bootstrapServers" in cluster:
            self.out.put(
                f"{alias}.bootstrap.servers",
                text(cluster["bootstrapServers"]),
                (*at, "bootstrapServers"),
            )
        self._security(alias, at, cluster)
        config = cluster.get("config")
        if isinstance(config, dict):
            for key, value in config.items():
                if connect and key in CONNECT_STATE_DEFAULTS:
                    continue  # where the Connect cluster keeps its state: the flows' mm2 setting
                self.out.put(f"{alias}.{key}", text(value), (*at, "config", key))
        if connect:
            self._connect_state(config if isinstance(config, dict) else {}, cluster)
        for key in cluster:
            if key in _CLUSTER_FIELDS or (connect and key in _STATE_FIELDS):
                continue
            if key in _WORKER_FIELDS or key in _STATE_FIELDS:
                self.out.warn(
                    "M009",
                    f"{key} configures Strimzi's Connect cluster; topo runs no Connect "
                    "cluster; not imported",
                    (*at, key),
                )
            else:
                self.out.warn(
                    "M010", f"cluster field {key} is not one topo knows; not imported", (*at, key)
                )

    def _connect_state(self, config: dict[str, Any], cluster: dict[str, Any]) -> None:
        """Where this MM2's Connect cluster keeps its connectors' positions and status: the v1
        target's fields, else its worker config, else Strimzi's defaults."""
        offsets = "offset.storage.topic"
        status = "status.storage.topic"
        self.out.connect_state = {
            "offsets_topic": text(
                cluster.get("offsetStorageTopic")
                or config.get(offsets)
                or CONNECT_STATE_DEFAULTS[offsets]
            ),
            "status_topic": text(
                cluster.get("statusStorageTopic")
                or config.get(status)
                or CONNECT_STATE_DEFAULTS[status]
            ),
            "connector": CONNECTOR_NAME,
        }

    def _security(self, alias: str, at: Path, cluster: dict[str, Any]) -> None:
        tls = cluster.get("tls")
        auth = cluster.get("authentication")
        kind = text(auth.get("type")) if isinstance(auth, dict) else ""
        encrypted = tls is not None or kind == "tls"
        protocol = ("SASL_" if kind in _SASL else "") + ("SSL" if encrypted else "PLAINTEXT")
        if protocol != "PLAINTEXT":
            self.out.put(
                f"{alias}.security.protocol",
                protocol,
                (*at, "tls" if tls is not None else "authentication"),
            )
        if isinstance(tls, dict):
            self._trusted(
                alias, (*at, "tls", "trustedCertificates"), tls.get("trustedCertificates")
            )
        if isinstance(auth, dict):
            self._authentication(alias, (*at, "authentication"), auth, kind)

    def _trusted(self, alias: str, at: Path, certificates: Any) -> None:
        if not isinstance(certificates, list) or not certificates:
            return
        path = self._secret_file(alias, (*at, 0), certificates[0], "certificate", "trusted.crt")
        if path is None:
            return
        self.out.put(f"{alias}.ssl.truststore.type", "PEM", (*at, 0))
        self.out.put(f"{alias}.ssl.truststore.location", path, (*at, 0))
        for index, more in enumerate(certificates[1:], start=1):
            other = self._kept_in(more, "certificate")
            self.out.warn(
                "M016",
                f"cluster {alias} trusts the certificates of {len(certificates)} Secrets; topo "
                f"trusts one PEM file: add those of {other} to {path}",
                (*at, index),
            )

    def _secret_file(
        self, alias: str, at: Path, source: Any, key_field: str, pattern_name: str
    ) -> str | None:
        """The path the topology reads a certificate or key from: where its Secret is mounted."""
        if not isinstance(source, dict) or not text(source.get("secretName")).strip():
            self.out.error("M011", f"cluster {alias}: this certificate names no secretName", at)
            return None
        secret = text(source["secretName"]).strip()
        key = text(source.get(key_field) or "").strip()
        name = key if key else pattern_name
        path = f"{SECRETS_FOLDER}/{secret}/{name}"
        self.out.files[path] = self._kept_in(source, key_field)
        return path

    @staticmethod
    def _kept_in(source: Any, key_field: str) -> str:
        if not isinstance(source, dict):
            return "a Secret"
        secret = text(source.get("secretName"))
        if source.get(key_field):
            return f"Kubernetes Secret {secret}, key {text(source[key_field])}"
        if source.get("pattern"):
            return (
                f"Kubernetes Secret {secret}, the keys matching {text(source['pattern'])} "
                "(in one file)"
            )
        return f"Kubernetes Secret {secret}"

    def _authentication(self, alias: str, at: Path, auth: dict[str, Any], kind: str) -> None:
        if kind == "tls":
            source = auth.get("certificateAndKey")
            cert = self._secret_file(alias, (*at, "certificateAndKey"), source, "certificate", "")
            key = cert and self._secret_file(alias, (*at, "certificateAndKey"), source, "key", "")
            if cert and key:
                self.out.certificates[alias] = {"cert": cert, "key": key}
            return
        mechanism = _SASL.get(kind)
        if mechanism is None:
            self.out.error(
                "M024",
                f"cluster {alias}: authentication type '{kind}' is not one topo can log in with "
                "(it reads tls, scram-sha-256, scram-sha-512, plain and oauth client credentials)",
                (*at, "type"),
            )
            return
        self.out.put(f"{alias}.sasl.mechanism", mechanism, (*at, "type"))
        if mechanism == "OAUTHBEARER":
            self._oauth(alias, at, auth)
            return
        username = text(auth.get("username"))
        password = self._secret(
            alias, "sasl.password", (*at, "passwordSecret"), auth.get("passwordSecret"), "password"
        )
        self.out.put(
            f"{alias}.sasl.jaas.config",
            references.build_jaas(mechanism, username, password),
            at,
        )

    def _secret(self, alias: str, setting: str, at: Path, source: Any, key_field: str) -> str:
        """A secret (for `setting`) as an environment variable the topology reads, said to be
        kept in its Secret (a `secretKeyRef` where topo runs in Kubernetes)."""
        name = references.env_name(alias, setting)
        if (
            not isinstance(source, dict)
            or not source.get("secretName")
            or not source.get(key_field)
        ):
            self.out.error(
                "M011",
                f"cluster {alias}: this secret needs secretName and {key_field}",
                at,
            )
            return self.out.env_reference(name, "Kubernetes Secret (not named)", at)
        return self.out.env_reference(name, self._kept_in(source, key_field), at)

    def _oauth(self, alias: str, at: Path, auth: dict[str, Any]) -> None:
        other = [grant for grant in _OAUTH_OTHER_GRANTS if grant in auth]
        if other or "clientSecret" not in auth:
            given = ", ".join(other) if other else "no clientSecret"
            self.out.error(
                "M024",
                f"cluster {alias}: oauth authentication with {given}; topo logs in with OAuth "
                "client credentials only (tokenEndpointUri, clientId and clientSecret)",
                at,
            )
            return
        for field_name, key in (
            ("tokenEndpointUri", "sasl.oauthbearer.token.endpoint.url"),
            ("clientId", "sasl.oauthbearer.client.id"),
            ("scope", "sasl.oauthbearer.scope"),
        ):
            if field_name in auth:
                self.out.put(f"{alias}.{key}", text(auth[field_name]), (*at, field_name))
        secret = self._secret(
            alias,
            "sasl.oauthbearer.client.secret",
            (*at, "clientSecret"),
            auth.get("clientSecret"),
            "key",
        )
        jaas = f'{OAUTH_MODULE} required clientSecret="{secret}";'
        self.out.put(f"{alias}.sasl.jaas.config", jaas, at)
        for field_name in auth:
            if field_name not in _OAUTH_KEPT:
                self.out.warn(
                    "M009",
                    f"cluster {alias}: oauth {field_name} has no topo equivalent (topo's client "
                    "asks the token endpoint with its id, secret and scope); not imported",
                    (*at, field_name),
                )

    # -- mirrors -------------------------------------------------------------------------------

    def _mirror(self, index: int, mirror: Any, connect_cluster: str | None) -> None:
        at: Path = ("spec", "mirrors", index)
        if not isinstance(mirror, dict):
            self.out.error("M011", "a mirror must be a mapping", at)
            return
        if "source" in mirror:
            source = (
                text(mirror["source"].get("alias")) if isinstance(mirror["source"], dict) else ""
            )
            target = connect_cluster or ""
            where: Path = (*at, "source")
        else:
            source = text(mirror.get("sourceCluster"))
            target = text(mirror.get("targetCluster") or connect_cluster)
            where = (*at, "sourceCluster")
        if not source or not target:
            self.out.error("M007", "this mirror names no source or no target cluster", at)
            return
        flow = f"{source}->{target}"
        if not isinstance(mirror.get("sourceConnector"), dict):
            self.out.warn(
                "M023",
                f"mirror {flow} has no sourceConnector, so MM2 copies no topic for it; a topo "
                "flow always copies, so it is not imported",
                at,
            )
            return
        gathered = self.gathered
        gathered.flow(flow, "enabled", "true", where, "the mirror")
        for field_name, key in _PATTERNS.items():
            if field_name in mirror:
                gathered.flow(flow, key, text(mirror[field_name]), (*at, field_name), "the mirror")
        for connector, switch in _CONNECTORS.items():
            block = mirror.get(connector)
            if block is None and switch is not None:
                gathered.flow(flow, switch, "false", at, f"the mirror (no {connector})")
            elif isinstance(block, dict):
                self._connector(flow, (*at, connector), block)
        for key in mirror:
            if key not in (*_PATTERNS, *_CONNECTORS, "source", "sourceCluster", "targetCluster"):
                self.out.warn(
                    "M010", f"mirror field {key} is not one topo knows; not imported", (*at, key)
                )

    def _connector(self, flow: str, at: Path, block: dict[str, Any]) -> None:
        name = str(at[-1])
        config = block.get("config")
        if isinstance(config, dict):
            for key, value in config.items():
                place: Path = (*at, "config", key)
                if key in intervals.DEFAULTS:
                    self.gathered.interval(key, text(value), place, name)
                else:
                    self.gathered.flow(flow, key, text(value), place, name)
        for key in block:
            if key == "config":
                continue
            if key == "tasksMax":
                self.gathered.flow(flow, "tasks.max", text(block[key]), (*at, key), name)
                continue
            self.out.warn(
                "M009",
                f"{name}.{key} says how Strimzi runs the connector; topo runs its flows itself "
                "(topo stop, topo apply); not imported",
                (*at, key),
            )

    # -- the rest of the resource ----------------------------------------------------------

    def _spec_key(self, key: str) -> None:
        if key in ("clusters", "connectCluster", "mirrors", "target"):
            return
        at: Path = ("spec", key)
        if key in _DEPLOYMENT:
            self.out.warn(
                "M009",
                f"spec.{key} says how Strimzi runs MM2's pods; topo runs as its own service "
                "(docs/service.md); not imported",
                at,
            )
        else:
            self.out.warn("M010", f"spec.{key} is not a {KIND} field topo knows; not imported", at)

    def _get(self, at: Path) -> Any:
        value: Any = self.data
        for part in at:
            if isinstance(value, dict) and isinstance(part, str):
                value = value.get(part)
            elif isinstance(value, list) and isinstance(part, int) and part < len(value):
                value = value[part]
            else:
                return None
        return value

    def _list(self, at: Path) -> list[Any]:
        value = self._get(at)
        return value if isinstance(value, list) else []
