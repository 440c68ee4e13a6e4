"""A checked document -> `Topology`: defaults applied, values checked against Kafka's rules.

Runs only on a document the schema accepted, so types are known here. Problems with individual
values (a regex that does not compile, a malformed bootstrap, incomplete security) become
diagnostics; the topology is still built so that the graph analysis can report its own.
"""

import re
from collections.abc import Mapping
from dataclasses import fields, replace
from functools import cache
from pathlib import PurePath
from typing import Any, TypeVar

from topology.core import (
    admin_plane,
    client_roles,
    kafka_rules,
    kerberos,
    msk_iam,
    naming,
    patterns,
    secrets,
)
from topology.core.copy_slots import LOCAL_COUNT
from topology.core.diagnostics import ERROR_LIMIT, Diagnostic, error, error_count, warning
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
from topology.core.source import Document, Path

# MM2's defaults (DefaultTopicFilter, DefaultGroupFilter), so an imported setup behaves the same.
DEFAULT_TOPICS = NameFilter(include=(".*",), exclude=(r".*[-.]internal", r".*\.replica", "__.*"))
DEFAULT_GROUPS = NameFilter(include=(".*",), exclude=("console-consumer-.*", "connect-.*", "__.*"))
_NEEDS_CREDENTIALS = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
# Client properties only Java clients read. topo's own Kafka client (librdkafka) refuses them
# ("Java JAAS configuration is not supported"), so `plan` would fail on a file `validate` passed.
JAVA_ONLY_CLIENT_SETTINGS = ("sasl.jaas.config",)


def java_login_advice(mechanism: str | None) -> str:
    """What to write instead of a JAAS line (sasl.jaas.config), for the SASL mechanism: the
    librdkafka properties of that login (names as in librdkafka's CONFIGURATION.md)."""
    if mechanism == kerberos.MECHANISM:
        return (
            f"for Kerberos write librdkafka's client properties instead: {kerberos.PRINCIPAL}, "
            f"{kerberos.KEYTAB} and, when the brokers' service is not kafka, "
            f"{kerberos.SERVICE_NAME}"
        )
    if mechanism == "OAUTHBEARER":
        return f"for OAUTHBEARER write librdkafka's client properties instead: {OAUTHBEARER_FORMS}"
    return "write the credentials as security.sasl (mechanism, username, password) instead"


# The two OAUTHBEARER logins topo's clients (librdkafka, and the Java client of the replication
# jobs) can both make; anything else fails when the first client connects.
OIDC_SETTINGS = (
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.token.endpoint.url",
)
UNSECURED_JWT = "enable.sasl.oauthbearer.unsecure.jwt"
OAUTHBEARER_FORMS = (
    "sasl.oauthbearer.method: oidc, sasl.oauthbearer.client.id, "
    "sasl.oauthbearer.client.secret (as ${env:NAME}), sasl.oauthbearer.token.endpoint.url "
    "(and sasl.oauthbearer.scope if your identity provider wants one); or, for tests, Kafka's "
    "unsecured tokens: enable.sasl.oauthbearer.unsecure.jwt: true and sasl.oauthbearer.config: "
    '"principal=NAME"'
)
_PRINCIPAL = re.compile(r"(?:^|\s)principal=\S")


def resolve(document: Document, errors_before: int = 0) -> tuple[Topology, list[Diagnostic]]:
    """Build the topology; every problem found along the way is returned, none raised, until
    the file has ERROR_LIMIT errors (`errors_before` of them found before): then what is left
    is not resolved, and a T309 says where that starts."""
    return _Resolver(document, errors_before).run()


class _Resolver:
    def __init__(self, document: Document, errors_before: int = 0) -> None:
        self.document = document
        self.diagnostics: list[Diagnostic] = []
        self.errors = errors_before  # the file's errors so far, counted up to `counted`
        self.counted = 0  # how many of `diagnostics` are in `errors`
        self.stopped = False

    def run(self) -> tuple[Topology, list[Diagnostic]]:
        data: dict[str, Any] = self.document.data
        clusters = {}
        for name, raw in data.get("clusters", {}).items():
            if self._stopping(("clusters", name)):
                break
            clusters[name] = self._cluster(name, raw)
        defaults = self._settings(data.get("defaults", {}), ("defaults",), _builtin_settings())
        flows = []
        for index, raw in enumerate(data.get("flows", [])):
            if not any(kind.value in raw for kind in FlowKind):
                continue  # the schema check reported it
            if self._stopping(("flows", index)):
                break
            flows.append(self._flow(index, raw, defaults))
        name = data.get("name") or _default_name(self.document.file)
        engine = self._engine(data.get("engine", {}))
        if engine.state_cluster is not None and engine.state_cluster not in clusters:
            self._error(
                "T201",
                f"engine: state_cluster {engine.state_cluster!r} is not one of the clusters",
                ("engine", "state_cluster"),
            )
        self._local_slots(engine, tuple(flows))
        self._one_kerberos_principal(clusters)
        topology = Topology(self.document.file, clusters, tuple(flows), name, engine)
        return topology, self.diagnostics

    def _stopping(self, where: Path) -> bool:
        """Whether the file has ERROR_LIMIT errors, and so the clusters and flows from `where`
        on are not resolved: said once (T309), there."""
        if self.stopped:
            return True
        self.errors += error_count(self.diagnostics[self.counted :])
        self.counted = len(self.diagnostics)
        if self.errors < ERROR_LIMIT:
            return False
        self.stopped = True
        self.diagnostics.append(
            warning(
                "T309",
                f"stopped after {self.errors} errors: the clusters and flows from here on are "
                "not checked; fix these and validate again",
                self.document.span(where, key=True),
            )
        )
        return True

    def _local_slots(self, engine: Engine, flows: tuple[Flow, ...]) -> None:
        """T211 for a local master of fewer task slots than the flows' copy slots need: each
        slot holds one as long as it runs, so the slots past the count would wait forever. A
        flow without `tasks` is sized within the count (`copy_slots`), one slot at least."""
        stated = LOCAL_COUNT.fullmatch(engine.master.strip())
        if engine.runner in ("spark", "none") or stated is None:
            return
        needed = sum((f.settings.tasks or 1) * f.edge_count for f in flows)  # sized: 1 at least
        if needed > int(stated.group(1)):
            self._error(
                "T211",
                f"engine: master {engine.master} runs {stated.group(1)} tasks at once, but the "
                f"flows' copy slots need {needed} (each holds one while it runs); leave master "
                f"out (local[*] is sized for the slots) or give local[{needed}] or more",
                ("engine", "master"),
            )

    def _engine(self, raw: dict[str, Any]) -> Engine:
        runner = raw.get("runner", "local")
        master = raw.get("master")
        if runner == "spark" and not master:
            self._error(
                "T209",
                "engine: the spark runner needs a master URL (spark://host:port)",
                ("engine", "runner"),
            )
        conf = {str(k): _conf_text(v) for k, v in raw.get("spark_conf", {}).items()}
        rebalance = conf.get(naming.LOOP_REBALANCE_CONF)
        if rebalance is not None and naming.loop_rebalance_ms(rebalance) is None:
            self._error(
                "T104",
                f"engine: spark_conf {naming.LOOP_REBALANCE_CONF} must be a whole number of "
                f"milliseconds (0: never move a partition between copy slots), not {rebalance!r}",
                ("engine", "spark_conf", naming.LOOP_REBALANCE_CONF),
            )
        # Every flow copies in the copy loop (its slots Spark tasks, on this machine or a
        # cluster's executors alike); the Spark engines a topology could once choose are gone.
        trigger = raw.get("trigger", "loop")
        if trigger != "loop":
            self.diagnostics.append(
                warning(
                    "T212",
                    f"engine: trigger {trigger} was removed: every flow copies in the copy loop "
                    "(one that copied as micro-batches goes on from where its Spark checkpoint "
                    "ends; docs/performance.md, Which engine); remove `trigger`",
                    self.document.span(("engine", "trigger")),
                )
            )
        return Engine(
            runner,
            master or "local[*]",
            conf,
            checkpoints=raw.get("checkpoints"),
            state_cluster=raw.get("state_cluster"),
            metrics=_metrics(raw.get("metrics", {})),
            intervals={str(k): float(v) for k, v in raw.get("intervals", {}).items()},
        )

    # -- clusters -------------------------------------------------------------------------

    def _cluster(self, name: str, raw: dict[str, Any]) -> Cluster:
        where: Path = ("clusters", name)
        bootstrap = raw["bootstrap"]
        self._reference_syntax(bootstrap, (*where, "bootstrap"))
        if secrets.reference(bootstrap) is None and "${" not in bootstrap:
            reason = kafka_rules.bootstrap_problem(bootstrap)
            if reason:
                self._error("T203", f"cluster {name}: bootstrap {reason}", (*where, "bootstrap"))
        security = self._security(name, raw.get("security", {}), (*where, "security"))
        client = raw.get("client", {})
        for key, value in client.items():
            if key in JAVA_ONLY_CLIENT_SETTINGS:
                mechanism = security.sasl.mechanism if security.sasl else None
                self.diagnostics.append(
                    error(
                        "T205",
                        f"cluster {name}: client.{key} is a Java client setting that topo's "
                        f"Kafka client (librdkafka) refuses; {java_login_advice(mechanism)}",
                        self.document.span((*where, "client", key), key=True),
                    )
                )
            secret = secrets.is_secret_key(key)
            if isinstance(value, str):
                self._reference_syntax(
                    value,
                    (*where, "client", key),
                    f"cluster {name}: client.{key}" if secret else None,
                )
            if secret and not isinstance(value, bool):
                self._plain_secret(name, f"client.{key}", str(value), (*where, "client", key))
        if security.sasl is not None:
            self._mechanism(name, security, client, (*where, "security"))
        topics = tuple(raw.get("topics", []))
        for index, topic in enumerate(topics):
            reason = kafka_rules.topic_name_problem(topic)
            if reason:
                self._error("T207", reason, (*where, "topics", index))
        roles = self._roles(raw, where, client_roles.ROLES, f"cluster {name}")
        return Cluster(
            name,
            bootstrap,
            security,
            dict(client),
            topics,
            self.document.span(where, key=True),
            roles,
        )

    def _roles(
        self, raw: dict[str, Any], where: Path, roles: tuple[str, ...], owner: str
    ) -> dict[str, dict[str, Any]]:
        """The client settings `raw` gives by role, each checked against what topo keeps for
        itself (T213, at the key)."""
        found = {}
        for role in roles:
            given = raw.get(role)
            if not given:
                continue
            refused = set()
            for key, value in given.items():
                problem = client_roles.refusal(role, key, value)
                if problem is not None:
                    refused.add(key)
                    self.diagnostics.append(
                        error(
                            "T213",
                            f"{owner}: {role}.{key}: {problem}",
                            self.document.span((*where, role, key), key=True),
                        )
                    )
            if role == "admin":
                notes = admin_plane.translate(given).notes
                for key in notes.keys() - refused:
                    self.diagnostics.append(
                        warning(
                            "T214",
                            f"{owner}: admin.{key}: {notes[key]}",
                            self.document.span((*where, role, key), key=True),
                        )
                    )
            found[role] = dict(given)
        return found

    def _security(self, name: str, raw: dict[str, Any], where: Path) -> Security:
        protocol = raw.get("protocol", "PLAINTEXT")
        sasl_raw, tls_raw = raw.get("sasl"), raw.get("tls")
        sasl = Sasl(**_known(Sasl, sasl_raw)) if sasl_raw else None
        tls = self._tls(name, tls_raw, (*where, "tls")) if tls_raw is not None else None
        if sasl_raw and "username" in sasl_raw:
            self._reference_syntax(sasl_raw["username"], (*where, "sasl", "username"))
        if sasl_raw and "password" in sasl_raw:
            self._reference_syntax(
                sasl_raw["password"],
                (*where, "sasl", "password"),
                f"cluster {name}: security.sasl.password",
            )
        if sasl and sasl.password is not None:
            self._plain_secret(
                name, "security.sasl.password", sasl.password, (*where, "sasl", "password")
            )
        if tls and tls.key_password is not None:
            self._reference_syntax(
                tls.key_password,
                (*where, "tls", "key_password"),
                f"cluster {name}: security.tls.key_password",
            )
            self._plain_secret(
                name, "security.tls.key_password", tls.key_password, (*where, "tls", "key_password")
            )
        uses_sasl = protocol.startswith("SASL_")
        uses_tls = protocol.endswith("SSL")
        if uses_sasl and sasl is None:
            self._error(
                "T205",
                f"cluster {name}: protocol {protocol} needs security.sasl",
                (*where, "protocol"),
            )
        if sasl is not None and not uses_sasl:
            self._error(
                "T205",
                f"cluster {name}: security.sasl is set but protocol is {protocol}; use "
                "SASL_SSL or SASL_PLAINTEXT",
                (*where, "sasl"),
            )
        if sasl is not None and sasl.mechanism in _NEEDS_CREDENTIALS:
            for key in ("username", "password"):
                if getattr(sasl, key) is None:
                    self._error(
                        "T205",
                        f"cluster {name}: SASL {sasl.mechanism} needs {key}",
                        (*where, "sasl"),
                    )
        if tls is not None and not uses_tls:
            self._error(
                "T205",
                f"cluster {name}: security.tls is set but protocol is {protocol}; use SSL or "
                "SASL_SSL",
                (*where, "tls"),
            )
        if tls is not None and (tls.cert is None) != (tls.key is None):
            self._error(
                "T205",
                f"cluster {name}: mutual TLS needs both tls.cert and tls.key",
                (*where, "tls"),
            )
        return Security(protocol, sasl, tls)

    def _tls(self, name: str, raw: dict[str, Any], where: Path) -> Tls:
        """`security.tls`, its key stores' passwords checked as secrets, and each key store
        instead of the PEM files that say the same (T205)."""
        stores = {}
        for kind in STORES:
            given = raw.get(kind)
            if not isinstance(given, dict):
                continue
            stores[kind] = KeyStore(**_known(KeyStore, given))
            for key in ("password", "key_password"):
                if given.get(key) is not None:
                    setting = f"security.tls.{kind}.{key}"
                    self._reference_syntax(
                        given[key], (*where, kind, key), f"cluster {name}: {setting}"
                    )
                    self._plain_secret(name, setting, str(given[key]), (*where, kind, key))
        plain = {key: value for key, value in _known(Tls, raw).items() if key not in STORES}
        tls = Tls(**plain, truststore=stores.get("truststore"), keystore=stores.get("keystore"))
        if tls.truststore is not None and tls.ca is not None:
            self._error(
                "T205",
                f"cluster {name}: tls.truststore and tls.ca both say whom to trust; give one",
                (*where, "truststore"),
            )
        if tls.keystore is not None and (tls.cert or tls.key or tls.key_password) is not None:
            self._error(
                "T205",
                f"cluster {name}: tls.keystore holds the client's certificate and key; leave "
                "out tls.cert, tls.key and tls.key_password (the key store's own key_password "
                "is its key's)",
                (*where, "keystore"),
            )
        return tls

    def _one_kerberos_principal(self, clusters: Mapping[str, Cluster]) -> None:
        """librdkafka keeps Kerberos tickets in the process's one ticket cache (KRB5CCNAME):
        two principals would overwrite each other's, and a client could log in as the other."""
        first: tuple[str, str] | None = None
        for name, cluster in clusters.items():
            sasl = cluster.security.sasl
            if sasl is None or sasl.mechanism != kerberos.MECHANISM:
                continue
            principal = str(cluster.client.get(kerberos.PRINCIPAL, "")).strip()
            if not principal:
                continue  # the cluster's own check says it is missing
            if first is None:
                first = (name, principal)
            elif principal != first[1]:
                self._error(
                    "T205",
                    f"cluster {name}: Kerberos principal {principal!r} differs from cluster "
                    f"{first[0]}'s {first[1]!r}; one topology logs in to its Kerberized "
                    "clusters as one principal (topo's Kafka client keeps one ticket cache "
                    "per process): use one principal that every realm accepts",
                    ("clusters", name, "client", kerberos.PRINCIPAL),
                )

    def _mechanism(
        self, name: str, security: Security, client: dict[str, Any], where: Path
    ) -> None:
        """SASL logins that would fail when the first client connects, refused now (T205, at
        the mechanism): Kerberos without a principal and its keytab, OAUTHBEARER without
        one whole way of getting tokens, and an MSK IAM login not over TLS or with
        credentials of its own (it takes the machine's AWS credentials)."""
        assert security.sasl is not None
        mechanism = security.sasl.mechanism
        at = (*where, "sasl", "mechanism")
        if mechanism == msk_iam.MECHANISM:
            problem = msk_iam.problem(security.protocol, security.sasl, client)
            if problem:
                self._error("T205", f"cluster {name}: SASL {mechanism} {problem}", at)
        elif mechanism == kerberos.MECHANISM:
            problem = kerberos.problem(security.sasl, client)
            if problem:
                self._error("T205", f"cluster {name}: SASL {mechanism} {problem}", at)
        elif mechanism == "OAUTHBEARER":
            problem = oauthbearer_problem(client)
            if problem:
                self._error("T205", f"cluster {name}: SASL OAUTHBEARER {problem}", at)

    # -- flows ----------------------------------------------------------------------------

    def _flow(self, index: int, raw: dict[str, Any], defaults: FlowSettings) -> Flow:
        where: Path = ("flows", index)
        settings = self._settings(raw, where, defaults)
        if "mirror" in raw:
            kind, sources, targets = (
                FlowKind.MIRROR,
                (raw["mirror"]["from"],),
                (raw["mirror"]["to"],),
            )
        elif "active-active" in raw:
            members = tuple(raw["active-active"])
            kind, sources, targets = FlowKind.ACTIVE_ACTIVE, members, members
        else:
            fan_in = raw["aggregate"]
            kind, sources, targets = FlowKind.AGGREGATE, tuple(fan_in["from"]), (fan_in["into"],)
        key = kind.value
        self._measurable(raw, where, settings)
        return Flow(
            index, kind, sources, targets, settings, self.document.span((*where, key), key=True)
        )

    def _measurable(self, raw: dict[str, Any], where: Path, settings: FlowSettings) -> None:
        """T210 for an objective on something the flow does not make: the heartbeats' age
        without heartbeats, the checkpoints' without checkpoints."""
        declared = settings.objectives.declared()
        for objective, emitted, made in (
            ("heartbeat_age_seconds", settings.emit.heartbeats, "heartbeats"),
            ("checkpoint_age_seconds", settings.emit.checkpoints, "checkpoints"),
        ):
            if objective not in declared or emitted:
                continue
            here = raw.get("objectives", {})
            at: Path = (
                (*where, "objectives", objective)
                if objective in here
                else ("defaults", "objectives", objective)
            )
            self._error(
                "T210",
                f"flows[{where[1]}]: objective {objective} cannot be measured: the flow emits no "
                f"{made} (emit.{made}: false); turn emit.{made} on or remove the objective",
                at,
            )

    def _settings(self, raw: dict[str, Any], where: Path, base: FlowSettings) -> FlowSettings:
        """`base` with the keys `raw` sets; nested mappings merge key by key."""
        sync, emit, mm2 = raw.get("sync", {}), raw.get("emit", {}), raw.get("mm2", {})
        return FlowSettings(
            topics=self._filter(raw.get("topics", {}), (*where, "topics"), base.topics),
            groups=self._filter(raw.get("groups", {}), (*where, "groups"), base.groups),
            naming=Naming(raw.get("naming", base.naming.value)),
            separator=raw.get("separator", base.separator),
            internal_separator=raw.get("internal_separator", base.internal_separator),
            replication_factor=raw.get("replication_factor", base.replication_factor),
            sync=_over(base.sync, sync),
            emit=_over(base.emit, emit),
            config_exclude=self._regexes(
                raw.get("configs", {}).get("exclude"),
                (*where, "configs", "exclude"),
                base.config_exclude,
            ),
            delivery=raw.get("delivery", base.delivery),
            start=raw.get("start", base.start),
            filter=raw.get("filter", base.filter),
            provenance=raw.get("provenance", base.provenance),
            mm2=_over(base.mm2, mm2),
            objectives=_over(base.objectives, raw.get("objectives", {})),
            on_loss=raw.get("on_loss", base.on_loss),
            tasks=raw.get("tasks", base.tasks),
            paused=raw.get("paused", base.paused),
            roles=self._flow_roles(raw, where, base),
        )

    def _flow_roles(
        self, raw: dict[str, Any], where: Path, base: FlowSettings
    ) -> Mapping[str, Mapping[str, Any]]:
        """The flow's client settings by role: its own over the defaults', key by key."""
        owner = "defaults" if where == ("defaults",) else f"flows[{where[1]}]"
        own = self._roles(raw, where, client_roles.FLOW_ROLES, owner)
        if not own:
            return base.roles
        roles = {role: dict(settings) for role, settings in base.roles.items()}
        for role, settings in own.items():
            roles[role] = {**roles.get(role, {}), **settings}
        return roles

    def _filter(self, raw: dict[str, Any], where: Path, base: NameFilter) -> NameFilter:
        include = self._regexes(raw.get("include"), (*where, "include"), base.include)
        exclude = self._regexes(raw.get("exclude"), (*where, "exclude"), base.exclude)
        if where[-1] == "topics" and "include" in raw:
            for index, pattern in enumerate(include):
                name = patterns.literal(pattern)
                reason = kafka_rules.topic_name_problem(name) if name is not None else None
                if reason:
                    self._error("T207", reason, (*where, "include", index))
        return NameFilter(include, exclude)

    def _regexes(
        self, raw: list[str] | None, where: Path, base: tuple[str, ...]
    ) -> tuple[str, ...]:
        if raw is None:
            return base
        for index, pattern in enumerate(raw):
            reason = patterns.problem(pattern)
            if reason:
                # Say "not valid" only of what is no regex at all; Java may well accept the rest.
                verdict = (
                    "is not a valid regular expression"
                    if patterns.is_invalid(pattern)
                    else "cannot be used as a filter"
                )
                self._error("T202", f"'{pattern}' {verdict}: {reason}", (*where, index))
        return tuple(raw)

    # -- helpers --------------------------------------------------------------------------

    def _reference_syntax(self, value: str, where: Path, secret: str | None = None) -> None:
        """T204 for a value that is almost a reference. For a secret (`secret` names it) the
        message names the setting instead of quoting a value that may hold the secret."""
        reason = secrets.reference_problem(value, setting=secret)
        if reason:
            self._error("T204", reason, where, secret=secret is not None)

    def _plain_secret(self, cluster: str, setting: str, value: str, where: Path) -> None:
        if value and secrets.reference(value) is None:
            self.diagnostics.append(
                warning(
                    "T206",
                    f"cluster {cluster}: {setting} is written in the file; use ${{env:NAME}} or "
                    "${file:path} so the secret stays out of version control",
                    self.document.span(where),
                    secret=True,
                )
            )

    def _error(self, code: str, message: str, where: Path, *, secret: bool = False) -> None:
        self.diagnostics.append(error(code, message, self.document.span(where), secret=secret))


def oauthbearer_problem(client: dict[str, Any]) -> str | None:
    """Why the client properties give SASL OAUTHBEARER no way to get a token, or None. The two
    ways: OIDC client credentials (sasl.oauthbearer.method: oidc with the client id, the client
    secret and the token endpoint), or Kafka's unsecured test tokens
    (enable.sasl.oauthbearer.unsecure.jwt: true with sasl.oauthbearer.config: "principal=NAME");
    librdkafka refuses the two together.

    A value given as a secret reference (`${env:NAME}`, `${file:path}`) counts as given, and is
    not judged: what it holds is read only when a client connects."""

    def given(key: str) -> bool:
        value = client.get(key)
        return value is not None and str(value).strip() != ""

    def referenced(key: str) -> bool:
        value = client.get(key)
        return isinstance(value, str) and secrets.reference(value) is not None

    def names_a_principal() -> bool:
        config = "sasl.oauthbearer.config"
        return referenced(config) or bool(_PRINCIPAL.search(str(client.get(config, ""))))

    # True or false, or (by reference) known only on connect.
    unsecured = referenced(UNSECURED_JWT) or _is_true(client.get(UNSECURED_JWT, "false"))
    if referenced("sasl.oauthbearer.method"):  # oidc or default: refused if neither can work
        if all(given(key) for key in OIDC_SETTINGS) or (unsecured and names_a_principal()):
            return None
        return f"needs a way to get tokens; write client properties: {OAUTHBEARER_FORMS}"
    method = str(client.get("sasl.oauthbearer.method", "default")).strip().lower()
    if method not in ("default", "oidc"):
        return (
            f"has client sasl.oauthbearer.method '{client['sasl.oauthbearer.method']}'; "
            "librdkafka knows default and oidc"
        )
    if method == "oidc":
        missing = [key for key in OIDC_SETTINGS if not given(key)]
        if missing:
            return f"with sasl.oauthbearer.method: oidc needs client {_listed(missing)}"
        if unsecured and not referenced(UNSECURED_JWT):
            return (
                f"sets both sasl.oauthbearer.method: oidc and {UNSECURED_JWT}: true, which "
                f"librdkafka refuses together; keep one of them"
            )
        return None
    if unsecured:
        if not names_a_principal():
            return (
                f'with {UNSECURED_JWT}: true needs client sasl.oauthbearer.config: "principal='
                'NAME" (the principal the unsecured token names)'
            )
        return None
    oidc = [key for key in OIDC_SETTINGS if given(key)]
    if oidc:
        missing = ["sasl.oauthbearer.method: oidc", *(k for k in OIDC_SETTINGS if not given(k))]
        return f"has client {_listed(oidc)} but needs {_listed(missing)} too"
    return f"needs a way to get tokens; write client properties: {OAUTHBEARER_FORMS}"


def _is_true(value: Any) -> bool:
    return str(value).strip().lower() == "true"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _conf_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _default_name(file: str) -> str:
    """The file's name without extension, as a legal owner name ("topology" for stdin)."""
    stem = PurePath(file).stem if file not in ("", "-", "<stdin>") else ""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", stem).lstrip("._-")[:100]
    return cleaned or "topology"


_Settings = TypeVar("_Settings", Sync, Emit, Mm2State, Objectives)


def _over(base: _Settings, raw: dict[str, Any]) -> _Settings:
    """`base` with the keys `raw` sets; `base` itself when it sets none (most flows: 20,000
    flows made 60,000 copies)."""
    known = _known(type(base), raw)
    return replace(base, **known) if known else base


def _known(value_type: type, raw: dict[str, Any]) -> dict[str, Any]:
    """The keys the value type has: unknown keys were reported (T101) and are left out."""
    names = _field_names(value_type)
    return {key: value for key, value in raw.items() if key in names}


@cache
def _field_names(value_type: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(value_type))


def _builtin_settings() -> FlowSettings:
    return FlowSettings(topics=DEFAULT_TOPICS, groups=DEFAULT_GROUPS)


def _metrics(raw: Any) -> MetricsEndpoint | None:
    """`engine.metrics`: false, or the endpoint's settings over the defaults."""
    if raw is False:
        return None
    if not isinstance(raw, dict):  # the schema check reported it
        return MetricsEndpoint()
    return MetricsEndpoint(**{k: raw[k] for k in ("bind", "port", "ready_lag") if k in raw})
