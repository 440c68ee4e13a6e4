"""One MM2 cluster's properties -> a topo `clusters.<name>` entry.

`props` holds what MM2 would use for the cluster: its own `<alias>.*` properties (alias stripped)
and, where it sets none, the top-level bootstrap/security/ssl/sasl ones (MirrorMakerConfig
.clusterProps). Security becomes `security:`; PEM files become `tls:`; every other client
property passes through under `client:`, secrets as references.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from topology import kafka_rules, secrets
from topology.mm2 import references, vocabulary
from topology.mm2.import_context import Context
from topology.mm2.properties import Property

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")


def is_secret(name: str) -> bool:
    """Property names whose values are secrets (ssl.keystore.key is an inline private key)."""
    return secrets.SECRET_KEY.search(name) is not None or name == "ssl.keystore.key"


@dataclass
class ClusterSettings:
    """What the flows need from a cluster besides its connection: start and delivery."""

    start: str | None = None  # from <alias>.consumer.auto.offset.reset, for flows out of it
    exactly_once: bool = False  # from <alias>.exactly.once.source.support, for flows into it
    entry: dict[str, Any] = field(default_factory=dict)


def import_cluster(
    alias: str, props: Mapping[str, Property], clusters_line: Property, context: Context
) -> ClusterSettings:
    return _ClusterImport(alias, dict(props), clusters_line, context).run()


class _ClusterImport:
    def __init__(
        self, alias: str, props: dict[str, Property], clusters_line: Property, context: Context
    ) -> None:
        self.alias = alias
        self.props = props
        self.clusters_line = clusters_line
        self.context = context
        self.client: dict[str, Any] = {}
        self.settings = ClusterSettings()

    def run(self) -> ClusterSettings:
        entry: dict[str, Any] = {}
        bootstrap = self.props.pop("bootstrap.servers", None)
        if bootstrap is None or not bootstrap.value.strip():
            self.context.error(
                "M005",
                f"cluster {self.alias} has no {self.alias}.bootstrap.servers; MM2 cannot "
                "connect to it",
                bootstrap or self.clusters_line,
            )
        else:
            value = ",".join(part.strip() for part in bootstrap.value.split(","))
            entry["bootstrap"] = self.context.value(
                self.alias, "bootstrap.servers", value, bootstrap
            )
            reason = None if "${" in value else kafka_rules.bootstrap_problem(value)
            if reason:
                self.context.error("M011", f"{bootstrap.key}: {reason}", bootstrap)
        security = self._security()
        if security:
            entry["security"] = security
        for name, prop in sorted(self.props.items(), key=lambda item: item[1].line):
            self._other(name, prop)
        if self.client:
            entry["client"] = self.client
        self.settings.entry = entry
        return self.settings

    # -- security ------------------------------------------------------------------------

    def _security(self) -> dict[str, Any]:
        protocol_prop = self.props.pop("security.protocol", None)
        protocol = protocol_prop.value.strip().upper() if protocol_prop else "PLAINTEXT"
        if protocol not in PROTOCOLS:
            self.context.error(
                "M011",
                f"{_key(protocol_prop)}: '{protocol}' is not a security protocol "
                f"({', '.join(PROTOCOLS)})",
                protocol_prop,
            )
            protocol = "PLAINTEXT"
        security: dict[str, Any] = {}
        if protocol != "PLAINTEXT":
            security["protocol"] = protocol
        sasl_props = self._take("sasl.")
        ssl_props = self._take("ssl.")
        if protocol.startswith("SASL_"):
            security["sasl"] = self._sasl(sasl_props)
        else:
            self._no_effect(sasl_props, f"protocol is {protocol}, so MM2 does not use SASL")
        if protocol.endswith("SSL"):
            tls = self._tls(ssl_props)
            if tls:
                security["tls"] = tls
        else:
            self._no_effect(ssl_props, f"protocol is {protocol}, so MM2 does not use TLS")
        return security

    def _take(self, prefix: str) -> dict[str, Property]:
        taken = {name: prop for name, prop in self.props.items() if name.startswith(prefix)}
        for name in taken:
            del self.props[name]
        return taken

    def _no_effect(self, props: dict[str, Property], reason: str) -> None:
        for prop in props.values():
            self.context.drop("M015", f"{prop.key} has no effect: {reason}", prop)

    def _sasl(self, props: dict[str, Property]) -> dict[str, Any]:
        mechanism_prop = props.pop("sasl.mechanism", None)
        mechanism = mechanism_prop.value.strip().upper() if mechanism_prop else "GSSAPI"
        if mechanism not in MECHANISMS:
            self.context.error(
                "M011",
                f"{_key(mechanism_prop)}: topo does not support SASL mechanism '{mechanism}' "
                f"({', '.join(MECHANISMS)})",
                mechanism_prop,
            )
            mechanism = "PLAIN"
        sasl: dict[str, Any] = {"mechanism": mechanism}
        jaas_prop = props.pop("sasl.jaas.config", None)
        if mechanism in references.LOGIN_MODULES:
            sasl.update(self._credentials(mechanism, jaas_prop))
        elif jaas_prop is not None:
            self._client("sasl.jaas.config", jaas_prop)
        for name, prop in props.items():
            self._client(name, prop)
        return sasl

    def _credentials(self, mechanism: str, jaas_prop: Property | None) -> dict[str, str]:
        """username and password from a PLAIN or SCRAM login module line."""
        where = jaas_prop or self.clusters_line
        jaas = references.parse_jaas(jaas_prop.value) if jaas_prop else None
        if jaas_prop is None or jaas is None:
            if jaas_prop is None:
                reason = (
                    f"{self.alias}.sasl.jaas.config is not set (MM2 may read a JAAS file given "
                    "by -Djava.security.auth.login.config)"
                )
            elif references.contains_reference(jaas_prop.value):
                reason = f"{jaas_prop.key} comes whole from a config provider"
            else:
                reason = f"{jaas_prop.key} is not a login module line topo can read"
            self.context.warn(
                "M014" if jaas_prop is not None else "M016",
                f"{reason}; topo needs the SASL username and password separately, so the "
                f"topology reads them from environment variables",
                where,
            )
            return {
                "username": self.context.secret(self.alias, "sasl.username", "", where),
                "password": self.context.secret(self.alias, "sasl.password", "", where),
            }
        expected = references.LOGIN_MODULES[mechanism]
        if jaas.module != expected:
            self.context.error(
                "M011",
                f"{jaas_prop.key}: SASL {mechanism} needs {expected}, not {jaas.module}; MM2 "
                "could not log in",
                jaas_prop,
            )
        options = dict(jaas.options)
        credentials = {}
        username = options.pop("username", None)
        password = options.pop("password", None)
        if username is not None:
            credentials["username"] = self.context.value(
                self.alias, "sasl.username", username, jaas_prop
            )
        else:
            self.context.error("M011", f"{jaas_prop.key} has no username option", jaas_prop)
        # The password is a secret whatever it holds; a reference in it is kept as one.
        credentials["password"] = self.context.secret(
            self.alias, "sasl.password", password or "", jaas_prop
        )
        if password is None:
            self.context.error("M011", f"{jaas_prop.key} has no password option", jaas_prop)
        for option in options:
            self.context.warn(
                "M009",
                f"{jaas_prop.key}: login option '{option}' has no topo equivalent and is not "
                "imported",
                jaas_prop,
            )
        return credentials

    def _tls(self, props: dict[str, Property]) -> dict[str, Any]:
        tls: dict[str, Any] = {}
        truststore_type = _upper(props.pop("ssl.truststore.type", None))
        keystore_type = _upper(props.pop("ssl.keystore.type", None))
        truststore = props.get("ssl.truststore.location")
        keystore = props.get("ssl.keystore.location")
        if truststore is not None and truststore_type == "PEM":
            del props["ssl.truststore.location"]
            tls["ca"] = self.context.value(self.alias, "ssl.truststore.location", *_vp(truststore))
        elif truststore_type is not None:
            self.client["ssl.truststore.type"] = truststore_type
        if keystore is not None and keystore_type == "PEM":
            # A Kafka PEM keystore is one file holding the private key and its certificate.
            del props["ssl.keystore.location"]
            path = self.context.value(self.alias, "ssl.keystore.location", *_vp(keystore))
            tls["cert"] = path
            tls["key"] = path
            key_password = props.pop("ssl.key.password", None)
            if key_password is not None:
                tls["key_password"] = self.context.secret(
                    self.alias, "ssl.key.password", *_vp(key_password)
                )
        elif keystore_type is not None:
            self.client["ssl.keystore.type"] = keystore_type
        for name, kind in (
            ("ssl.truststore.location", truststore_type),
            ("ssl.keystore.location", keystore_type),
        ):
            store = props.get(name)  # still here: not a PEM file, so it passes through
            if store is not None:
                self.context.warn(
                    "M016",
                    f"{store.key} is a {kind or 'JKS'} store, passed through under client; "
                    "topo's Python clients (librdkafka) read PEM files only, so convert it to "
                    "PEM and use security.tls",
                    store,
                )
        algorithm = props.pop("ssl.endpoint.identification.algorithm", None)
        if algorithm is not None:
            if not algorithm.value.strip():
                tls["verify_hostname"] = False
            elif algorithm.value.strip().lower() != "https":
                self._client("ssl.endpoint.identification.algorithm", algorithm)
        for name, prop in props.items():
            self._client(name, prop)
        return tls

    # -- everything else -------------------------------------------------------------------

    def _other(self, name: str, prop: Property) -> None:
        if name == "consumer.auto.offset.reset":
            self.settings.start = start_from(prop, self.context)
        elif name == "consumer.isolation.level":
            isolation(prop, self.context)
        elif name == "exactly.once.source.support":
            self.settings.exactly_once = exactly_once(prop, self.context)
        elif vocabulary.CLIENT_ROLE_PATTERN.fullmatch(name):
            self.context.drop(
                "M009",
                f"{prop.key}: topo gives a cluster one set of client properties (client:), not "
                "one per producer, consumer and admin client; not imported",
                prop,
            )
        elif vocabulary.is_connector_setting(name):
            self.context.drop(
                "M015",
                f"{prop.key} has no effect: MM2 reads '{name}' at the top level or per flow "
                f"({self.alias}->X.{name}), not per cluster",
                prop,
            )
        elif vocabulary.is_worker_setting(name):
            self.context.drop(
                "M009",
                f"{prop.key} configures MM2's Connect worker; topo has no equivalent",
                prop,
            )
        else:
            self._client(name, prop)

    def _client(self, name: str, prop: Property) -> None:
        if is_secret(name):
            self.client[name] = self.context.secret(self.alias, name, prop.value, prop)
            return
        self.client[name] = _native(self.context.value(self.alias, name, prop.value, prop))


def start_from(prop: Property, context: Context) -> str | None:
    value = prop.value.strip().lower()
    if value in ("earliest", "latest"):
        return value
    context.drop(
        "M009",
        f"{prop.key}: '{prop.value.strip()}' has no topo equivalent (start is earliest or "
        "latest); new flows start at the earliest offset",
        prop,
    )
    return None


def isolation(prop: Property, context: Context) -> None:
    """topo always reads read_committed; say so when MM2 was told otherwise."""
    if prop.value.strip().lower() != "read_committed":
        context.drop(
            "M016",
            f"{prop.key}: topo always reads with isolation.level=read_committed, so records of "
            "aborted transactions are not copied",
            prop,
        )


def exactly_once(prop: Property, context: Context) -> bool:
    value = prop.value.strip().lower()
    if value == "enabled":
        return True
    if value != "disabled":
        context.drop(
            "M009",
            f"{prop.key}: '{prop.value.strip()}' is a migration step of MM2's exactly-once "
            "support; flows into this cluster are imported as at-least-once",
            prop,
        )
    return False


def _key(prop: Property | None) -> str:
    return prop.key if prop is not None else "(default)"


def _upper(prop: Property | None) -> str | None:
    return prop.value.strip().upper() if prop is not None else None


def _vp(prop: Property) -> tuple[str, Property]:
    return prop.value.strip(), prop


def _native(value: str) -> str | int | bool:
    """Numbers and booleans as YAML shows them; anything ambiguous stays text."""
    if value in ("true", "false"):
        return value == "true"
    # ASCII digits only (isdigit() also takes '²', which int() refuses), and no longer than a
    # Java long: a million-digit value stays text rather than hit Python's int-parsing limit.
    if re.fullmatch(r"0|[1-9][0-9]{0,18}", value):
        return int(value)
    return value
