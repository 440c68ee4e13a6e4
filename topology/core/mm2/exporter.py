"""A resolved `Topology` -> `mm2.properties` for MM2's dedicated mode, and what MM2 cannot say.

Each topo edge becomes an enabled MM2 flow `<source>-><target>`. Settings every edge shares are
written once at the top level; the rest per flow, and values equal to MM2's defaults are left
out (except replication.factor, which people look for). Secret references become Kafka config
provider references. Whatever MM2 has no word for (record filters, the provenance header, owned
topics) is reported as a warning and written as a comment where it would have gone: an export
never drops a setting silently.
"""

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from topology.core import kerberos, msk_iam
from topology.core.connection import (
    OAUTHBEARER_LIBRDKAFKA_ONLY,
    jaas_line,
    oauthbearer_java_login,
)
from topology.core.diagnostics import Diagnostic, Span, error, has_errors, in_file_order, warning
from topology.core.mm2 import properties, references, vocabulary
from topology.core.mm2.grouping import identity_loops
from topology.core.model import Cluster, Edge, Flow, FlowSettings, Naming, Topology
from topology.core.source import Document, Path

# MM2's defaults as it writes them, for leaving equal values out.
_MM2_DEFAULTS = {
    "topics": ".*",
    "topics.exclude": ", ".join(vocabulary.TOPO_DEFAULTS[("topics", "exclude")]),
    "groups": ".*",
    "groups.exclude": ", ".join(vocabulary.TOPO_DEFAULTS[("groups", "exclude")]),
    "replication.policy.class": vocabulary.DEFAULT_POLICY,
    "replication.policy.separator": ".",
    "replication.policy.internal.topic.separator.enabled": "true",
    "sync.topic.configs.enabled": "true",
    "sync.topic.acls.enabled": "true",
    "refresh.topics.enabled": "true",
    "sync.group.offsets.enabled": "false",
    "emit.heartbeats.enabled": "true",
    "emit.checkpoints.enabled": "true",
    "config.properties.exclude": ", ".join(vocabulary.DEFAULT_CONFIG_EXCLUDES),
    "consumer.auto.offset.reset": "earliest",
}
_ALWAYS_WRITTEN = {"replication.factor"}
_FLOW_ONLY = {"consumer.auto.offset.reset"}  # MM2 ignores top-level consumer.* settings
_PREFER_GLOBAL = {
    "replication.factor",
    "replication.policy.class",
    "replication.policy.separator",
    "replication.policy.internal.topic.separator.enabled",
}


# A line break in a name would end a property (or a comment) early: the rest would be read as
# a line of its own. Any control character in a name is a mistake, never meant.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


@dataclass(frozen=True)
class ExportResult:
    text: str  # empty when there are errors: nothing is written
    diagnostics: tuple[Diagnostic, ...]
    env_vars: tuple[str, ...]  # variables MM2 reads through EnvVarConfigProvider

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def export(topology: Topology, source: str, document: Document | None = None) -> ExportResult:
    """The topology as mm2.properties; `document`, when given, locates errors on the exact key."""
    return _Exporter(topology, source, document).run()


@dataclass
class _Section:
    title: str
    comments: list[str] = field(default_factory=list)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    notes: dict[str, list[str]] = field(default_factory=dict)  # comment lines before a key

    def add(self, key: str, value: str, note: str | None = None) -> None:
        if note:
            self.notes.setdefault(key, []).extend(properties.comment(note))
        self.pairs.append((key, value))


class _Exporter:
    def __init__(self, topology: Topology, source: str, document: Document | None) -> None:
        self.topology = topology
        self.source = source
        self.document = document
        self.diagnostics: list[Diagnostic] = []
        self.summary: list[str] = []  # one line per thing MM2 cannot express, for the header
        self.edges = topology.edges()
        self.looping: set[tuple[str, str]] = set()  # edges on an identity loop

    def run(self) -> ExportResult:
        self._names()
        if has_errors(self.diagnostics):  # every key would be built from a broken name
            return ExportResult("", tuple(in_file_order(self.diagnostics)), ())
        clusters = [self._cluster(cluster) for cluster in self.topology.clusters.values()]
        settings = {edge: _settings(edge.settings) for edge in self.edges}
        shared = self._shared(settings)
        self._loops()
        for flow in self.topology.flows:
            self._unsupported(flow)
        flows = [self._flow(edge, settings[edge], shared) for edge in self.edges]
        sections = [*clusters, self._global(shared), *flows]
        values = [value for section in sections for _, value in section.pairs]
        providers = references.providers_used(values)
        if has_errors(self.diagnostics):
            return ExportResult("", tuple(in_file_order(self.diagnostics)), ())
        text = self._text(sections, providers)
        env_vars = sorted(
            {
                match["name"]
                for value in values
                for match in references.TOPO_REFERENCE.finditer(value)
                if match["kind"] == "env"
            }
        )
        return ExportResult(text, tuple(in_file_order(self.diagnostics)), tuple(env_vars))

    # -- names ------------------------------------------------------------------------------

    def _names(self) -> None:
        """Cluster names and client property names become property keys: refuse any holding a
        control character (a line break would start a stray property line in MM2's file)."""
        for cluster in self.topology.clusters.values():
            if _CONTROL.search(cluster.name):
                self._error(
                    "M020",
                    f"cluster name {cluster.name!r} contains a control character (a line "
                    "break, tab or the like); MM2 property keys are built from it, so rename "
                    "the cluster",
                    ("clusters", cluster.name),
                    cluster.span,
                )
            for key in cluster.client:
                if _CONTROL.search(key) or not key.strip():
                    self._error(
                        "M020",
                        f"cluster {cluster.name!r}: client property name {key!r} is empty or "
                        "contains a control character; MM2 could not read it as one key",
                        ("clusters", cluster.name, "client", key),
                        cluster.span,
                    )

    # -- clusters ---------------------------------------------------------------------------

    def _cluster(self, cluster: Cluster) -> _Section:
        name = cluster.name
        section = _Section(f"Cluster {name}")
        section.add(f"{name}.bootstrap.servers", cluster.bootstrap)
        security = cluster.security
        if security.protocol != "PLAINTEXT":
            section.add(f"{name}.security.protocol", security.protocol)
        if security.sasl is not None:
            sasl = security.sasl
            section.add(f"{name}.sasl.mechanism", sasl.mechanism)
            if sasl.mechanism in references.LOGIN_MODULES:
                jaas = references.build_jaas(
                    sasl.mechanism, sasl.username or "", sasl.password or ""
                )
                section.add(f"{name}.sasl.jaas.config", jaas)
            if sasl.mechanism == kerberos.MECHANISM:
                self._kerberos(cluster, section)
            if sasl.mechanism == "OAUTHBEARER":  # librdkafka's settings, as Java's login
                client = {key: _text(value) for key, value in cluster.client.items()}
                for setting, login in oauthbearer_java_login(client).items():
                    section.add(f"{name}.{setting}", login)
                if "sasl.oauthbearer.token.endpoint.url" in client:
                    section.comments += properties.comment(
                        "MM2 on Kafka 4 fetches only the OAuth URLs its JVM allows: "
                        "KAFKA_OPTS=-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=<the token "
                        "endpoint>"
                    )
            if sasl.mechanism == msk_iam.MECHANISM:  # Amazon's library, on MM2's classpath
                for setting, login in msk_iam.java_login().items():
                    if setting != "sasl.mechanism":
                        section.add(f"{name}.{setting}", login)
        if security.tls is not None:
            self._tls(cluster, section)
        if any(edge.source == name for edge in self.edges):
            section.add(
                f"{name}.consumer.isolation.level",
                "read_committed",
                "topo copies committed records only; MM2's consumer reads uncommitted ones "
                "unless told so",
            )
        into = [edge for edge in self.edges if edge.target == name]
        exactly_once = [edge for edge in into if edge.settings.delivery == "exactly-once"]
        if exactly_once:
            section.add(
                f"{name}.exactly.once.source.support",
                "enabled",
                "exactly-once delivery (KIP-618); MM2 sets it per target cluster",
            )
            if len(exactly_once) != len(into):
                others = ", ".join(e.name for e in into if e not in exactly_once)
                self._warn(
                    f"MM2 sets exactly-once per target cluster, so {others} (at-least-once in "
                    f"the topology) also become exactly-once into {name}",
                    cluster.span,
                )
        written = dict(section.pairs)  # what the topology's structured settings wrote
        for key, value in cluster.client.items():
            text = _text(value)
            if key in _librdkafka_login(cluster):
                continue  # in the JAAS line
            if vocabulary.is_worker_setting(key):
                # MM2 reads `<alias>.client.id` as its Connect worker's, never its clients':
                # they take it per role (and `topo import mm2` reads the three back as one).
                for role in ("admin", "consumer", "producer"):
                    section.add(
                        f"{name}.{role}.{key}",
                        text,
                        f"client.{key}: MM2's clients take it per role"
                        if role == "admin"
                        else None,
                    )
            elif f"{name}.{key}" not in written:
                section.add(f"{name}.{key}", text)
            elif written[f"{name}.{key}"] != text:
                self._conflict(cluster, key)
        written = dict(section.pairs)
        for role, given in sorted(cluster.roles.items()):
            for key, value in sorted(given.items()):
                prop = f"{name}.{role}.{key}"
                if prop not in written:
                    section.add(prop, _text(value))
                elif written[prop] != _text(value):
                    self._conflict(cluster, f"{role}.{key}")
        if cluster.topics:
            note = (
                f"cluster {name}: topics (owned by its own applications) only feed topo's "
                "checks; MM2 has no such setting"
            )
            section.comments += properties.comment(note)
            self._warn(note, cluster.span)
        return section

    def _kerberos(self, cluster: Cluster, section: "_Section") -> None:
        """Kerberos as MM2's Java clients log in: Krb5LoginModule from the keytab, and the
        brokers' service name, which they have no default for."""
        name = cluster.name
        given = {key: _text(value) for key, value in cluster.client.items()}
        section.add(
            f"{name}.sasl.jaas.config",
            jaas_line(kerberos.LOGIN_MODULE, kerberos.client_login_options(given)),
            "MM2's JVM finds the realm's KDC in /etc/krb5.conf, or in the file "
            "KAFKA_OPTS=-Djava.security.krb5.conf=FILE names",
        )
        section.add(f"{name}.{kerberos.SERVICE_NAME}", kerberos.service_name(given))
        keytab = given.get(kerberos.KEYTAB, "")
        if keytab and not posixpath.isabs(keytab) and not keytab.startswith("~"):
            note = (
                f"cluster {name}: the keytab {keytab} is relative: topo reads it from the "
                "topology's folder, MM2 from its working directory"
            )
            section.comments += properties.comment(note)
            self._warn(note, cluster.span)

    def _conflict(self, cluster: Cluster, key: str) -> None:
        """Two settings would write one property: MM2 would read only the last, so the other
        would be lost without a word. Refuse instead of choosing."""
        name = cluster.name
        source = _SOURCES.get(key, "the topology's own settings")
        # The values themselves are not shown: they may be secrets.
        message = (
            f"cluster {name}: client.{key} and {source} both set {name}.{key} in "
            "mm2.properties, to different values; MM2 reads only one, and the export does "
            "not choose for you. Remove one of them"
        )
        if key == "sasl.jaas.config":
            # A reference (${env:...}) hides what the line holds: it cannot be compared.
            message = (
                f"cluster {name}: client.sasl.jaas.config and security.sasl (username and "
                f"password) are two SASL logins, and MM2 reads one {name}.sasl.jaas.config; "
                "exporting one would drop the other's credentials. Remove "
                "client.sasl.jaas.config: the export writes the JAAS line from security.sasl"
            )
        self._error("M019", message, ("clusters", name, "client", key), cluster.span)

    def _tls(self, cluster: Cluster, section: _Section) -> None:
        name, tls = cluster.name, cluster.security.tls
        assert tls is not None
        if tls.ca is not None:
            section.add(f"{name}.ssl.truststore.type", "PEM")
            section.add(f"{name}.ssl.truststore.location", tls.ca)
        if tls.cert is not None and tls.key is not None:
            if tls.cert == tls.key:
                section.add(f"{name}.ssl.keystore.type", "PEM")
                section.add(f"{name}.ssl.keystore.location", tls.cert)
            else:
                note = (
                    f"cluster {name}: a Kafka PEM keystore is one file holding the private key "
                    f"and its certificate; concatenate {tls.key} and {tls.cert} into one file "
                    f"and set {name}.ssl.keystore.type=PEM and {name}.ssl.keystore.location to "
                    "it"
                )
                section.comments += properties.comment(note)
                self._warn(note, cluster.span)
        if tls.key_password is not None:
            section.add(f"{name}.ssl.key.password", tls.key_password)
        for kind, store in tls.stores():
            if store.type is not None:
                section.add(f"{name}.ssl.{kind}.type", store.type)
            section.add(f"{name}.ssl.{kind}.location", store.path)
            if store.password is not None:
                section.add(f"{name}.ssl.{kind}.password", store.password)
            if store.key_password is not None:
                section.add(f"{name}.ssl.key.password", store.key_password)
        if not tls.verify_hostname:
            section.add(f"{name}.ssl.endpoint.identification.algorithm", "")

    # -- settings -----------------------------------------------------------------------------

    def _shared(self, settings: dict[Edge, dict[str, str]]) -> dict[str, str]:
        """Settings every edge has the same value for: written once, at the top level.

        With one flow only the naming policy and replication factor go there (MM2's workers
        read the policy at the top level); the rest reads better on the flow itself.
        """
        if not settings:  # no flows: clusters only, and nothing shared
            return {}
        first = next(iter(settings.values()))
        return {
            key: value
            for key, value in first.items()
            if key not in _FLOW_ONLY
            and all(s[key] == value for s in settings.values())
            and (len(settings) > 1 or key in _PREFER_GLOBAL)
        }

    def _global(self, shared: dict[str, str]) -> _Section:
        section = _Section("Settings of every flow")
        for key, value in shared.items():
            if key in _ALWAYS_WRITTEN or _MM2_DEFAULTS.get(key) != value:
                section.add(key, value, _note(key, value))
        for key, seconds in sorted(self.topology.engine.intervals.items()):
            section.add(key, _seconds(seconds), "from engine.intervals: one value for every flow")
        if any(edge.settings.delivery == "exactly-once" for edge in self.edges):
            section.add(
                "dedicated.mode.enable.internal.rest",
                "true",
                "exactly-once needs MM2's internal REST server in dedicated mode (KIP-710); "
                "it listens on `listeners` (default http://:8083)",
            )
        return section

    def _flow(self, edge: Edge, settings: dict[str, str], shared: dict[str, str]) -> _Section:
        flow = self.topology.flow(edge.flow)
        where = f"flows[{flow.index}]" + (f": {flow.name}" if flow.name != edge.name else "")
        section = _Section(f"Flow {edge.name} ({where})")
        if (edge.source, edge.target) in self.looping:
            section.comments += properties.comment(_LOOP_COMMENT)
        if edge.settings.filter is not None:
            section.comments += properties.comment(
                "topo filters this flow's records (filter:); MM2 has no record filter and "
                "copies them all"
            )
        if not edge.settings.sync.partitions:
            section.comments += properties.comment(
                "sync.partitions: false; MM2's refresh.topics.enabled=false also stops it "
                "finding new topics"
            )
        section.add(f"{edge.name}.enabled", "true")
        for role, given in sorted(edge.settings.roles.items()):
            for key, value in sorted(given.items()):
                section.add(f"{edge.name}.{_FLOW_ROLE_PREFIX[role]}{key}", _text(value))
        for key, value in settings.items():
            if key in shared or _MM2_DEFAULTS.get(key) == value:
                continue
            note = _note(key, value)
            if key == "consumer.auto.offset.reset":
                self._warn(
                    f"flows[{flow.index}] ({flow.name}): start: latest is honoured by MM2 3.7 "
                    "and later only (KAFKA-13988); older releases start at the earliest offset",
                    flow.span,
                    summary=False,
                )
            section.add(f"{edge.name}.{key}", value, note)
        for key in ("topics", "topics.exclude", "groups", "groups.exclude"):
            if "," in "".join(_regexes(edge.settings, key)):
                self._warn(
                    f"flows[{flow.index}] ({flow.name}): a {key} regex contains a comma, and "
                    "MM2 splits its lists at commas; rewrite it without one (a{1,3} -> "
                    "(a|aa|aaa))",
                    flow.span,
                )
        return section

    def _unsupported(self, flow: Flow) -> None:
        settings = flow.settings
        if settings.filter is not None:
            self._warn(
                f"flows[{flow.index}] ({flow.name}): MM2 has no record filter, so it copies "
                "every record of the selected topics (filter is not exported)",
                flow.span,
            )
        if settings.paused:
            self._warn(
                f"flows[{flow.index}] ({flow.name}): paused: true is not exported (MM2's "
                "properties have no paused flow, so MM2 would copy it); set its "
                "<source>-><target>.enabled = false to keep it stopped",
                flow.span,
            )
        if not settings.sync.partitions:
            self._warn(
                f"flows[{flow.index}] ({flow.name}): sync.partitions: false is exported as "
                "refresh.topics.enabled=false, which also stops MM2 from finding new topics",
                flow.span,
            )

    def _loops(self) -> None:
        edges = [(e.source, e.target, e.settings.naming is Naming.IDENTITY) for e in self.edges]
        for loop in identity_loops(edges):
            inside = [e for e in self.edges if e.source in loop and e.target in loop]
            self.looping |= {(e.source, e.target) for e in inside}
            flow = self.topology.flow(inside[0].flow)
            self.diagnostics.append(
                warning(
                    "M018",
                    f"clusters {', '.join(loop)} replicate in a loop with "
                    "IdentityReplicationPolicy: MM2 has no cycle detection for identity names "
                    "and no provenance header, so it copies every record around the loop "
                    "forever; use prefix naming for MM2",
                    flow.span,
                )
            )
            self.summary += [
                f"!!! clusters {', '.join(loop)} replicate in a LOOP with "
                "IdentityReplicationPolicy.",
                "!!! MM2 has no cycle detection for identity names: it will copy every record",
                "!!! around this loop forever. topo stops such loops with its provenance header;",
                "!!! MM2 cannot. Use prefix naming for these flows before running this file.",
            ]

    def _error(self, code: str, message: str, path: Path, fallback: Span) -> None:
        span = self.document.span(path, key=True) if self.document is not None else fallback
        self.diagnostics.append(error(code, message, span))

    def _warn(self, message: str, span: Span, summary: bool = True) -> None:
        self.diagnostics.append(warning("M017", message, span))
        if summary:
            self.summary.append(f"- {message}")

    # -- text ---------------------------------------------------------------------------------

    def _text(self, sections: list[_Section], providers: list[tuple[str, str]]) -> str:
        lines = properties.comment(
            f"MirrorMaker 2 configuration generated by `topo export mm2` from {self.source}.\n"
            "Run it with: bin/connect-mirror-maker.sh <this file>"
        )
        if self.summary:
            lines += ["#", "# Not expressible in MM2 (the export warned about each):"]
            for item in dict.fromkeys(self.summary):  # a flow's edges repeat its warnings
                lines += properties.comment(item)
        lines += ["", properties.line("clusters", ", ".join(self.topology.clusters))]
        if providers:
            kinds = {alias for alias, _ in providers}
            lines += [""]
            lines += [note for alias, note in _PROVIDER_NOTES if alias in kinds]
            lines.append(properties.line("config.providers", ", ".join(a for a, _ in providers)))
            for alias, provider in providers:
                lines.append(properties.line(f"config.providers.{alias}.class", provider))
            lines += self._relative_files(sections)
        for section in sections:
            if not section.pairs and not section.comments:
                continue
            lines += ["", *properties.comment(f"-- {section.title}"), *section.comments]
            for key, value in section.pairs:
                lines += section.notes.get(key, [])
                lines.append(properties.line(key, references.to_kafka(value)))
        return "\n".join(lines) + "\n"

    def _relative_files(self, sections: list[_Section]) -> list[str]:
        relative = sorted(
            {
                path
                for section in sections
                for _, value in section.pairs
                for path in references.file_references(value)
                if not posixpath.isabs(path)
            }
        )
        if not relative:
            return []
        note = (
            f"${{file:...}} paths {', '.join(relative)} are relative: topo reads them from the "
            "topology's folder, MM2 from its working directory"
        )
        self._warn(note, Span(self.topology.file, 1, 1))
        return properties.comment(note)


# Which structured setting writes each property a client property can collide with.
_SOURCES = {
    "security.protocol": "security.protocol",
    "sasl.mechanism": "security.sasl.mechanism",
    "sasl.jaas.config": "security.sasl",
    "ssl.truststore.type": "security.tls.ca or truststore",
    "ssl.truststore.location": "security.tls.ca or truststore",
    "ssl.truststore.password": "security.tls.truststore",
    "ssl.keystore.type": "security.tls.cert or keystore",
    "ssl.keystore.location": "security.tls.cert or keystore",
    "ssl.keystore.password": "security.tls.keystore",
    "ssl.key.password": "security.tls.key_password or keystore",
    "ssl.endpoint.identification.algorithm": "security.tls.verify_hostname",
    "consumer.isolation.level": "topo's read_committed source consumers",
    "exactly.once.source.support": "delivery: exactly-once",
}

_LOOP_COMMENT = (
    "!!! WARNING: this flow is part of a loop under IdentityReplicationPolicy. MM2 cannot\n"
    "!!! tell a copied record from a local one, so it copies records around the loop forever."
)
_PROVIDER_NOTES = (
    (references.ENV_ALIAS, "# Secrets: ${env:NAME} is the environment variable NAME."),
    (references.DIRECTORY_ALIAS, "# Secrets: ${dir:DIR:FILE} is the content of the file DIR/FILE."),
)


def _librdkafka_login(cluster: Cluster) -> tuple[str, ...]:
    """The cluster's client settings that only librdkafka reads: the export writes their login
    as MM2's JAAS line instead."""
    mechanism = cluster.security.sasl.mechanism if cluster.security.sasl else None
    if mechanism == kerberos.MECHANISM:
        return kerberos.LIBRDKAFKA_ONLY
    if mechanism == "OAUTHBEARER":
        return OAUTHBEARER_LIBRDKAFKA_ONLY
    return ()


def _settings(settings: FlowSettings) -> dict[str, str]:
    """One edge's settings in MM2's names and text, every one of them."""
    identity = settings.naming is Naming.IDENTITY
    factor = settings.replication_factor
    return {
        "topics": ", ".join(settings.topics.include),
        "topics.exclude": ", ".join(settings.topics.exclude),
        "groups": ", ".join(settings.groups.include),
        "groups.exclude": ", ".join(settings.groups.exclude),
        "replication.policy.class": (
            vocabulary.IDENTITY_POLICY if identity else vocabulary.DEFAULT_POLICY
        ),
        "replication.policy.separator": settings.separator,
        "replication.policy.internal.topic.separator.enabled": _text(settings.internal_separator),
        "replication.factor": str(factor) if factor is not None else "-1",
        "sync.topic.configs.enabled": _text(settings.sync.configs),
        "sync.topic.acls.enabled": _text(settings.sync.acls),
        "refresh.topics.enabled": _text(settings.sync.partitions),
        "sync.group.offsets.enabled": _text(settings.sync.group_offsets),
        "emit.heartbeats.enabled": _text(settings.emit.heartbeats),
        "emit.checkpoints.enabled": _text(settings.emit.checkpoints),
        "config.properties.exclude": ", ".join(
            (*vocabulary.DEFAULT_CONFIG_EXCLUDES, *settings.config_exclude)
        ),
        # MM2 resumes from its own committed positions whatever this says; `start: mm2` is
        # topo's name for exactly that, and a partition MM2 never copied starts at the earliest.
        "consumer.auto.offset.reset": "earliest" if settings.start == "mm2" else settings.start,
    }


def _regexes(settings: FlowSettings, key: str) -> Sequence[str]:
    group = settings.topics if key.startswith("topics") else settings.groups
    return group.exclude if key.endswith("exclude") else group.include


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# Where MM2 takes a flow's own client settings, winning over its clusters' as topo's do: the
# copies' producer is Connect's (`producer.override.*`), the source consumer MirrorSourceTask's.
_FLOW_ROLE_PREFIX = {"producer": "producer.override.", "consumer": "source.consumer."}


def _note(key: str, value: str) -> str | None:
    if key == "replication.factor" and value == "-1":
        return "-1: the target broker's default.replication.factor"
    if key == "consumer.auto.offset.reset":
        return "start: latest (honoured since Kafka 3.7, KAFKA-13988)"
    if key == "config.properties.exclude":
        return "MM2's default exclusions, then the topology's configs.exclude"
    return None


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
