"""The MM2 properties a Strimzi resource or Connect configurations stand for, placed where the
user wrote them.

`topo import strimzi` and `topo import connect` do not import a second way: each reads its file
into the `mm2.properties` entries MirrorMaker 2 would run with (`clusters=`, `<alias>.*`,
`<source>-><target>.*`), every entry at the line and column of the YAML or JSON it came from,
and hands them to the one importer. So every diagnostic, every secret rule and every mapping is
the one `topo import mm2` has, and points at the file the user has.

What properties cannot say rides beside them (`StandIn`): where the secrets are kept (a
Kubernetes Secret), the certificate files a cluster presents, and where that MM2 keeps its
Connect state (the flows' `mm2` setting), which `finish` writes into the imported topology.
"""

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from topology.core.connection import property_text
from topology.core.diagnostics import (
    Diagnostic,
    Span,
    error,
    has_errors,
    in_file_order,
    warning,
)
from topology.core.mm2 import properties, references
from topology.core.mm2.import_clusters import is_secret
from topology.core.mm2.import_context import brief
from topology.core.mm2.importer import ImportResult, import_entries
from topology.core.mm2.properties import Property
from topology.core.source import Document, Path

Place = tuple[Span, Span]  # where a property's key and value are

ENV_PROVIDER_LINES = {
    "config.providers": "env",
    "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
}


@dataclass
class StandIn:
    """What one file stands for: MM2 properties, and what they cannot hold."""

    file: str
    document: Document
    entries: list[Property] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Environment variables the properties name, and where their values are kept.
    secrets: dict[str, str] = field(default_factory=dict)
    # Files the topology names, and where they are kept ("Secret my-user, key user.crt").
    files: dict[str, str] = field(default_factory=dict)
    # cluster alias -> {"cert": path, "key": path}: a client certificate and key in two files,
    # which a Kafka PEM key store (one file) cannot say.
    certificates: dict[str, dict[str, str]] = field(default_factory=dict)
    # The flows' `mm2` setting: where that MM2 keeps its Connect state.
    connect_state: dict[str, str] = field(default_factory=dict)
    # Secrets read but not imported (a connector's second copy of a password): never shown.
    hidden: list[Property] = field(default_factory=list)
    _declared_env: bool = False

    # -- writing properties ------------------------------------------------------------------

    def place(self, at: Path) -> "Place":
        """Where the document has `at`: its key, and its value (the key's place if it has none)."""
        key_span = self.document.span(at, key=True)
        return key_span, self.document.values.get(at, key_span)

    def put(self, key: str, value: str, at: Path) -> None:
        """One property, at the key and value of `at` in the document."""
        self.put_at(key, value, self.place(at))

    def put_at(self, key: str, value: str, place: "Place") -> None:
        """One property, at a place taken earlier (perhaps in another document)."""
        self.entries.append(_property(key, value, place))

    def hide(self, key: str, value: str, at: Path) -> None:
        """A secret the import leaves out: its line is never shown as it is."""
        self.hidden.append(_property(key, value, self.place(at)))

    def env_reference(self, name: str, kept_in: str, at: Path) -> str:
        """`${env:NAME}` as a Kafka config-provider reference, declaring the provider once."""
        if not self._declared_env:
            for key, value in ENV_PROVIDER_LINES.items():
                self.put(key, value, at)
            self._declared_env = True
        self.secrets[name] = kept_in
        return f"${{env:{name}}}"

    # -- saying things -------------------------------------------------------------------------

    def error(self, code: str, message: str, at: Path) -> None:
        self.diagnostics.append(error(code, brief(message), self._span(at)))

    def warn(self, code: str, message: str, at: Path, *, secret: bool = False) -> None:
        self.diagnostics.append(warning(code, brief(message), self._span(at), secret=secret))

    def _span(self, at: Path) -> Span:
        return self.document.span(at, key=True)


class Gathered:
    """Settings gathered from several connectors (MM2's source, checkpoint and heartbeat
    connectors each carry their own copy), each written once: per flow, per cluster, and the
    driver's intervals, which topo keeps once for every flow."""

    def __init__(self, out: StandIn) -> None:
        self.out = out
        self.flows: dict[str, dict[str, tuple[str, Place]]] = {}
        self.clusters: dict[str, dict[str, tuple[str, Place]]] = {}
        self.intervals: dict[str, tuple[str, Place]] = {}

    def flow(self, flow: str, key: str, value: str, at: Path, connector: str) -> None:
        settings = self.flows.setdefault(flow, {})
        self._once(
            settings,
            key,
            value,
            at,
            f"{connector} sets {key}",
            f"flow {flow}: each MM2 connector read its own, a topo flow has one",
        )

    def cluster(self, alias: str, key: str, value: str, at: Path, connector: str) -> None:
        settings = self.clusters.setdefault(alias, {})
        self._once(
            settings,
            key,
            value,
            at,
            f"{connector} sets cluster {alias}'s {key}",
            "topo connects to a cluster one way",
        )

    def interval(self, key: str, value: str, at: Path, connector: str) -> None:
        self._once(
            self.intervals,
            key,
            value,
            at,
            f"{connector} sets {key}",
            "topo's driver does this for every flow at one interval",
        )

    def _once(
        self,
        settings: dict[str, tuple[str, Place]],
        key: str,
        value: str,
        at: Path,
        what: str,
        why: str,
    ) -> None:
        if key in settings and _meaning(key, settings[key][0]) != _meaning(key, value):
            if is_secret(key):  # the values are not shown: they hold the secret
                said = f"{what} otherwise than another connector"
                self.out.hide(key, value, at)
            else:
                said = f"{what} to {value!r}, another connector to {settings[key][0]!r}"
            self.out.warn(
                "M023", f"{said}: {why}; the first is imported", at, secret=is_secret(key)
            )
            return
        settings.setdefault(key, (value, self.out.place(at)))

    def write(self) -> None:
        for alias, settings in self.clusters.items():
            for key, (value, at) in settings.items():
                self.out.put_at(f"{alias}.{key}", value, at)
        for key, (value, at) in self.intervals.items():
            self.out.put_at(key, value, at)
        for flow, settings in self.flows.items():
            for key, (value, at) in settings.items():
                self.out.put_at(f"{flow}.{key}", value, at)


def _property(key: str, value: str, place: Place) -> Property:
    key_span, value_span = place
    return Property(
        key,
        value,
        key_span.line,
        key_span.column,
        value_span.line,
        value_span.column,
        value_span.line,
    )


def _meaning(key: str, value: str) -> object:
    """What a setting says, for telling two connectors' apart: a JAAS line's module and
    options (spacing and quoting are style), any other value's words."""
    if key.endswith("sasl.jaas.config"):
        jaas = references.parse_jaas(value)
        if jaas is not None:
            return jaas
    return value.split()


def text(value: Any) -> str:
    """A YAML or JSON scalar as the text a properties file would hold (null: empty)."""
    return "" if value is None else property_text(value)


def imported(
    stand_in: StandIn,
    source_text: str,
    line_name: Callable[[int], str] = "line {}".format,
) -> ImportResult:
    """The import of what `stand_in` stands for (`source_text`: the file it was read from).
    A file that stands for no MM2 properties at all is not imported: its errors say why."""
    if not stand_in.entries and has_errors(stand_in.diagnostics):
        diagnostics = tuple(in_file_order(stand_in.diagnostics))
        return ImportResult(None, diagnostics, (), (), (), source_text, {})
    result = import_entries(
        stand_in.entries, source_text, stand_in.file, stand_in.diagnostics, line_name
    )
    shown = properties.mask(result.shown_text, stand_in.hidden)
    return finish(stand_in, dataclasses.replace(result, shown_text=shown))


def finish(stand_in: StandIn, result: ImportResult) -> ImportResult:
    """The import with what the properties could not hold written in: the client certificate
    files, the flows' `mm2` setting, where each secret is kept, and the notes."""
    data = result.data
    if data is not None:
        data = _with_certificates(data, stand_in.certificates)
        if stand_in.connect_state:
            data = {**data, "defaults": {**data.get("defaults", {}), "mm2": stand_in.connect_state}}
            data = _defaults_before_flows(data)
    env_vars = tuple(
        dataclasses.replace(var, purpose=f"{var.purpose}; {stand_in.secrets[var.name]}")
        if var.name in stand_in.secrets
        else var
        for var in result.env_vars
    )
    notes = (*stand_in.notes, *_file_notes(stand_in.files), *result.notes)
    return dataclasses.replace(result, data=data, env_vars=env_vars, notes=notes)


def _with_certificates(
    data: dict[str, Any], certificates: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    clusters = dict(data["clusters"])
    for alias, files in certificates.items():
        if alias not in clusters:
            continue
        entry = dict(clusters[alias])
        security = dict(entry.get("security", {}))
        security["tls"] = {**security.get("tls", {}), **files}
        entry["security"] = security
        clusters[alias] = entry
    return {**data, "clusters": clusters}


def _defaults_before_flows(data: dict[str, Any]) -> dict[str, Any]:
    """The keys in the order a topology is read: defaults above the flows they apply to."""
    ordered = {key: value for key, value in data.items() if key not in ("defaults", "flows")}
    return {**ordered, "defaults": data["defaults"], "flows": data["flows"]}


def _file_notes(files: Mapping[str, str]) -> list[str]:
    return [f"{path} is read from {kept_in}" for path, kept_in in sorted(files.items())]
