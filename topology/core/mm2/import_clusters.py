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

from topology.core import client_roles, kafka_rules, msk_iam, secrets
from topology.core.mm2 import import_roles, references, vocabulary
from topology.core.mm2.import_context import Context
from topology.core.mm2.properties import Property
from topology.core.resolve import UNSECURED_JWT, java_login_advice

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI", msk_iam.MECHANISM)
# Amazon's aws-msk-iam-auth classes: its IAM login, and the same signed request as OAUTHBEARER.
_MSK_CLASSES = "software.amazon.msk.auth.iam."
_HANDLERS = ("sasl.login.callback.handler.class", "sasl.client.callback.handler.class")
# The login module of each mechanism without username and password, and its options that
# librdkafka has a property for (librdkafka's CONFIGURATION.md names).
_JAVA_LOGINS = {
    "GSSAPI": (
        "Krb5LoginModule",
        {
            "principal": "sasl.kerberos.principal",
            "keyTab": "sasl.kerberos.keytab",
            "serviceName": "sasl.kerberos.service.name",
        },
    ),
    "OAUTHBEARER": (
        "OAuthBearerLoginModule",
        {
            "clientId": "sasl.oauthbearer.client.id",
            "clientSecret": "sasl.oauthbearer.client.secret",
            "scope": "sasl.oauthbearer.scope",
        },
    ),
}
# Kafka's OIDC client-credentials token fetcher (and its older name, in the `secured`
# package): what librdkafka's `sasl.oauthbearer.method: oidc` does.
_KAFKA_OIDC_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)
# Written as references only: a client id is half of the login, the secret the other half.
_JAAS_SECRETS = {"sasl.oauthbearer.client.id", "sasl.oauthbearer.client.secret"}
# OAuthBearerLoginModule's options for Kafka's unsecured test tokens (the default login handler,
# OAuthBearerUnsecuredLoginCallbackHandler) that librdkafka's sasl.oauthbearer.config has a name
# for: the subject is its principal.
_UNSECURED_OPTIONS = {
    "unsecuredLoginStringClaim_sub": "principal",
    "unsecuredLoginLifetimeSeconds": "lifeSeconds",
}
_UNSECURED_EXTENSION = "unsecuredLoginExtension_"
# Krb5LoginModule switches that say "log in from the keytab", which librdkafka's kinit does.
_IMPLIED_OPTIONS = {"useKeyTab", "storeKey", "doNotPrompt"}

# The Java key store types topo reads (`security.tls.truststore` and `.keystore`).
JAVA_STORES = ("JKS", "PKCS12")


def is_secret(name: str) -> bool:
    """Property names whose values are secrets, by topo's one rule (`secrets.is_secret_key`):
    misspelled ones too (`ssl.keystore.pasword`, `sasl.jass.config`), and inline private keys
    (`ssl.keystore.key`, `ssl.key.pem`)."""
    return secrets.is_secret_key(name)


@dataclass
class ClusterSettings:
    """What the flows need from a cluster besides its connection: start and delivery."""

    start: str | None = None  # from <alias>.consumer.auto.offset.reset, for flows out of it
    exactly_once: bool = False  # from <alias>.exactly.once.source.support, for flows into it
    entry: dict[str, Any] = field(default_factory=dict)
    # client properties made from another property (a JAAS line's options): name -> that one
    client_origins: dict[str, Property] = field(default_factory=dict)
    # each role setting (role, key) -> the property it came from
    role_origins: dict[tuple[str, str], Property] = field(default_factory=dict)


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
        self.roles: dict[str, dict[str, Any]] = {}
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
        self._same_for_every_role()
        for name, prop in sorted(self.props.items(), key=lambda item: item[1].line):
            self._other(name, prop)
        if self.client:
            entry["client"] = self.client
        for role in client_roles.ROLES:
            if role in self.roles:
                entry[role] = self.roles[role]
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
        if mechanism == msk_iam.MECHANISM or (mechanism == "OAUTHBEARER" and _amazons(props)):
            self._msk_iam(props)
            for name, prop in props.items():
                self._client(name, prop)
            return {"mechanism": msk_iam.MECHANISM}
        sasl: dict[str, Any] = {"mechanism": mechanism}
        jaas_prop = props.pop("sasl.jaas.config", None)
        if mechanism in references.LOGIN_MODULES:
            sasl.update(self._credentials(mechanism, jaas_prop))
        elif jaas_prop is not None:
            self._java_login(mechanism, jaas_prop, props)
        if mechanism == "OAUTHBEARER":
            self._oidc_handler(props)
        for name, prop in props.items():
            self._client(name, prop)
        return sasl

    def _msk_iam(self, props: dict[str, Property]) -> None:
        """Amazon MSK's IAM login (as AWS_MSK_IAM, or as OAUTHBEARER with Amazon's handler):
        its classes are what topo's own login is; a JAAS option choosing other credentials
        than the machine's default chain (awsProfileName, awsRoleArn) is said, not kept."""
        for name in _HANDLERS:
            props.pop(name, None)
        jaas_prop = props.pop("sasl.jaas.config", None)
        jaas = references.parse_jaas(jaas_prop.value) if jaas_prop is not None else None
        if jaas_prop is not None and jaas is not None and jaas.options:
            self.context.warn(
                "M016",
                f"{jaas_prop.key}: {', '.join(sorted(jaas.options))} chose the AWS credentials; "
                "topo's MSK IAM login takes the machine's usual chain, so give it those the "
                "usual way (AWS_PROFILE, AWS_ROLE_ARN with a web identity, an instance or pod "
                "role)",
                jaas_prop,
            )

    def _java_login(self, mechanism: str, jaas_prop: Property, props: dict[str, Property]) -> None:
        """A GSSAPI or OAUTHBEARER JAAS line as the librdkafka properties of the same login.

        topo's Kafka client (librdkafka) refuses sasl.jaas.config (T205). Krb5LoginModule's
        principal, keyTab and serviceName, and OAuthBearerLoginModule's clientId, clientSecret
        and scope have librdkafka names; the client id and secret become references. A line
        that yields none of them is dropped, saying what to write instead.
        """
        jaas = references.parse_jaas(jaas_prop.value)
        module = jaas.module.rsplit(".", 1)[-1] if jaas is not None else None
        expected = _JAVA_LOGINS[mechanism]
        if jaas is None or module != expected[0]:
            if jaas is None and references.contains_reference(jaas_prop.value):
                reason = "comes whole from a config provider, so topo cannot read the login in it"
            elif jaas is None:
                reason = "is not a login module line topo can read"
            else:
                reason = f"holds {module}, not the {expected[0]} SASL {mechanism} uses"
            self._drop_jaas(mechanism, jaas_prop, reason)
            return
        if mechanism == "OAUTHBEARER" and _unsecured(jaas.options):
            self._unsecured_login(jaas_prop, jaas.options, props)
            return
        mapped: dict[str, str] = {}
        unknown: list[str] = []
        for option, value in jaas.options.items():
            name = expected[1].get(option)
            if name is None:
                if option not in _IMPLIED_OPTIONS:
                    unknown.append(option)
            elif name in props or name in mapped:
                continue  # the property the user wrote wins over the JAAS option
            else:
                mapped[name] = value
        if not mapped:
            options = [
                *expected[1],
                *(["unsecuredLoginStringClaim_sub"] if mechanism == "OAUTHBEARER" else []),
            ]
            self._drop_jaas(mechanism, jaas_prop, f"sets none of {', '.join(options)}")
            return
        if mechanism == "OAUTHBEARER" and "sasl.oauthbearer.method" not in props:
            self.client["sasl.oauthbearer.method"] = "oidc"
            self.settings.client_origins["sasl.oauthbearer.method"] = jaas_prop
        for name, value in mapped.items():
            if name in _JAAS_SECRETS:
                self.client[name] = self.context.secret(self.alias, name, value, jaas_prop)
            else:
                self.client[name] = self.context.value(self.alias, name, value, jaas_prop)
            self.settings.client_origins[name] = jaas_prop
        self._unknown_options(unknown, expected[0], jaas_prop)
        if mechanism == "OAUTHBEARER" and "sasl.oauthbearer.token.endpoint.url" not in props:
            self.context.warn(
                "M016",
                f"{jaas_prop.key}: topo's Kafka client fetches OAUTHBEARER tokens itself "
                "(sasl.oauthbearer.method: oidc) and needs the token endpoint: set "
                f"{self.alias}.sasl.oauthbearer.token.endpoint.url, or client "
                "sasl.oauthbearer.token.endpoint.url in the topology",
                jaas_prop,
            )

    def _unknown_options(self, unknown: list[str], module: str, jaas_prop: Property) -> None:
        if unknown:
            self.context.warn(
                "M009",
                f"{jaas_prop.key}: login option{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(o) for o in unknown)} of {module} "
                f"{'have' if len(unknown) > 1 else 'has'} no librdkafka equivalent and "
                f"{'are' if len(unknown) > 1 else 'is'} not imported",
                jaas_prop,
            )

    def _unsecured_login(
        self, jaas_prop: Property, options: dict[str, str], props: dict[str, Property]
    ) -> None:
        """Kafka's unsecured test tokens (OAuthBearerLoginModule with unsecuredLogin* options)
        as librdkafka writes them: enable.sasl.oauthbearer.unsecure.jwt and
        sasl.oauthbearer.config ("principal=NAME lifeSeconds=N extension_X=V"). A
        sasl.oauthbearer.config property the user wrote wins over the options."""
        pairs: list[str] = []
        unknown: list[str] = []
        for option, value in options.items():
            name = _UNSECURED_OPTIONS.get(option)
            if name is None and option.startswith(_UNSECURED_EXTENSION):
                name = "extension_" + option.removeprefix(_UNSECURED_EXTENSION)
            if name is None or not value or any(c.isspace() for c in value):
                unknown.append(option)  # a value with blanks cannot be one name=value pair
            else:
                pairs.append(f"{name}={value}")
        if not any(pair.startswith("principal=") for pair in pairs):
            reason = "sets no unsecuredLoginStringClaim_sub (the principal the token names)"
            self._drop_jaas("OAUTHBEARER", jaas_prop, reason)
            return
        self.client[UNSECURED_JWT] = True
        self.settings.client_origins[UNSECURED_JWT] = jaas_prop
        if "sasl.oauthbearer.config" not in props:
            config = " ".join(pairs)
            self.client["sasl.oauthbearer.config"] = self.context.value(
                self.alias, "sasl.oauthbearer.config", config, jaas_prop
            )
            self.settings.client_origins["sasl.oauthbearer.config"] = jaas_prop
        self._unknown_options(unknown, "OAuthBearerLoginModule", jaas_prop)

    def _drop_jaas(self, mechanism: str, jaas_prop: Property, reason: str) -> None:
        self.context.drop(
            "M009",
            f"{jaas_prop.key} {reason}; topo's Kafka client (librdkafka) reads no JAAS line, so "
            f"it is not imported: {java_login_advice(mechanism)}",
            jaas_prop,
        )

    def _oidc_handler(self, props: dict[str, Property]) -> None:
        """Java's OIDC token fetcher is a class; librdkafka's is `sasl.oauthbearer.method`."""
        for name in ("sasl.login.callback.handler.class", "sasl.client.callback.handler.class"):
            prop = props.pop(name, None)
            if prop is not None and prop.value.strip() in _KAFKA_OIDC_HANDLERS:
                continue  # Kafka's own client-credentials fetcher: what method oidc does
            if prop is not None:
                self.context.drop(
                    "M009",
                    f"{prop.key} names a Java class; topo's Kafka client (librdkafka) fetches "
                    "OAUTHBEARER tokens itself with sasl.oauthbearer.method: oidc; not imported",
                    prop,
                )

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

    def _store(
        self, kind: str, location: Property, store_type: str | None, props: dict[str, Property]
    ) -> dict[str, Any]:
        """`security.tls.truststore` or `.keystore`: the file, its type when MM2 names it (topo
        reads it from the file otherwise) and its passwords as references."""
        store: dict[str, Any] = {
            "path": self.context.value(self.alias, f"ssl.{kind}.location", *_vp(location))
        }
        if store_type is not None:
            store["type"] = store_type
        secret_names = [("password", f"ssl.{kind}.password")]
        if kind == "keystore":
            secret_names.append(("key_password", "ssl.key.password"))
        for key, name in secret_names:
            given = props.pop(name, None)
            if given is not None:
                store[key] = self.context.secret(self.alias, name, *_vp(given))
        return store

    def _tls(self, props: dict[str, Property]) -> dict[str, Any]:
        tls: dict[str, Any] = {}
        truststore_type = _upper(props.pop("ssl.truststore.type", None))
        keystore_type = _upper(props.pop("ssl.keystore.type", None))
        truststore = props.get("ssl.truststore.location")
        keystore = props.get("ssl.keystore.location")
        if truststore is not None and truststore_type == "PEM":
            del props["ssl.truststore.location"]
            tls["ca"] = self.context.value(self.alias, "ssl.truststore.location", *_vp(truststore))
        elif truststore_type not in (None, *JAVA_STORES):
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
        elif keystore_type not in (None, *JAVA_STORES):
            self.client["ssl.keystore.type"] = keystore_type
        for kind, store_type in (("truststore", truststore_type), ("keystore", keystore_type)):
            store = props.get(f"ssl.{kind}.location")  # still here: not a PEM file
            if store is None:
                continue
            if store_type in (None, *JAVA_STORES):  # Kafka's default type is JKS
                del props[f"ssl.{kind}.location"]
                tls[kind] = self._store(kind, store, store_type, props)
                continue
            self.context.warn(
                "M016",
                f"{store.key} is a {store_type} store, passed through under client; topo "
                "reads JKS, PKCS12 and PEM stores only, so convert it to one of them",
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

    def _same_for_every_role(self) -> None:
        """`<alias>.admin.X`, `.consumer.X` and `.producer.X` all set, to one value: one
        client property X, which topo gives all its clients. `topo export mm2` writes a
        client property MM2 would read as its Connect worker's (`client.id`) that way, so
        export and import give back what they started from."""
        roles = ("admin.", "consumer.", "producer.")
        for name in [n for n in self.props if n.startswith("admin.")]:
            base = name.removeprefix("admin.")
            found = [self.props.get(role + base) for role in roles]
            if base in self.props or any(p is None for p in found):
                continue
            if len({p.value for p in found if p is not None}) != 1:
                continue
            for role in roles:
                del self.props[role + base]
            first = min((p for p in found if p is not None), key=lambda p: p.line)
            self._client(base, first)

    def _other(self, name: str, prop: Property) -> None:
        if name == "consumer.auto.offset.reset":
            self.settings.start = start_from(prop, self.context)
        elif name == "consumer.isolation.level":
            isolation(prop, self.context)
        elif name == "exactly.once.source.support":
            self.settings.exactly_once = exactly_once(prop, self.context)
        elif (found := import_roles.role_of(name, flow=False)) is not None:
            self._role(*found, prop)
        elif vocabulary.CLIENT_ROLE_PATTERN.fullmatch(name):
            self.context.drop(
                "M009",
                f"{prop.key}: a cluster's clients take settings as consumer, producer or admin "
                "(<alias>.consumer.*), not per source or target side; not imported",
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

    def _role(self, role: str, key: str, prop: Property) -> None:
        """`<alias>.<role>.<key>`: the cluster's `<role>:` section, unless topo keeps it."""
        why = import_roles.not_kept(role, key, prop.value.strip())
        if why is not None:
            self.context.drop("M009", f"{prop.key}: {why}; not imported", prop)
            return
        value = native(self.context.value(self.alias, f"{role}.{key}", prop.value, prop))
        self.roles.setdefault(role, {})[key] = value
        self.settings.role_origins[(role, key)] = prop

    def _client(self, name: str, prop: Property) -> None:
        if is_secret(name):
            self.client[name] = self.context.secret(self.alias, name, prop.value, prop)
            return
        self.client[name] = native(self.context.value(self.alias, name, prop.value, prop))


def _unsecured(options: dict[str, str]) -> bool:
    """An OAuthBearerLoginModule line for Kafka's unsecured tokens, not for an OIDC login."""
    oidc = {"clientId", "clientSecret", "scope"}
    return not oidc & set(options) and any(o.startswith("unsecuredLogin") for o in options)


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


def native(value: str) -> str | int | bool:
    """Numbers and booleans as YAML shows them; anything ambiguous stays text."""
    if value in ("true", "false"):
        return value == "true"
    # ASCII digits only (isdigit() also takes '²', which int() refuses), and no longer than a
    # Java long: a million-digit value stays text rather than hit Python's int-parsing limit.
    if re.fullmatch(r"0|[1-9][0-9]{0,18}", value):
        return int(value)
    return value


def _amazons(props: Mapping[str, Property]) -> bool:
    """Whether a cluster's SASL settings name Amazon's MSK IAM classes."""
    return any(
        props[name].value.strip().startswith(_MSK_CLASSES)
        for name in (*_HANDLERS, "sasl.jaas.config")
        if name in props
    )
