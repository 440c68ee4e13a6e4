"""`mm2.properties` text -> topology data, diagnostics, and the environment variables to set.

The import reads the file the way MirrorMakerConfig does: `clusters=` names the clusters,
`<alias>.*` configures one, `<src>-><tgt>.*` overrides one flow, everything else is global.
Each enabled flow's effective settings (MM2 defaults <- global <- flow, plus what the clusters
add: start position, exactly-once) are computed first; `grouping` then turns the flows into
topo flows, and whatever differs from the topology's defaults is written on each flow.

Every property ends up mapped, or named in a warning; none is dropped silently. Secrets never
reach the topology: `import_context.Context.secret` turns them into references.
"""

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from topology.core import intervals
from topology.core.diagnostics import Diagnostic, Span, error, has_errors, in_file_order
from topology.core.mm2 import grouping, import_clusters, import_roles, properties, vocabulary
from topology.core.mm2.import_clusters import (
    ClusterSettings,
    import_cluster,
    is_secret,
    isolation,
    start_from,
)
from topology.core.mm2.import_context import Context, EnvVar, brief
from topology.core.mm2.import_settings import Flat, Parsed, SettingsReader, setting_path, split_list
from topology.core.mm2.properties import Property
from topology.core.source import Path

_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_START_NAMES = ("source.consumer.auto.offset.reset", "consumer.auto.offset.reset")
_ISOLATION_NAMES = ("source.consumer.isolation.level", "consumer.isolation.level")


@dataclass(frozen=True)
class ImportResult:
    data: dict[str, Any] | None  # None when there are errors
    diagnostics: tuple[Diagnostic, ...]
    env_vars: tuple[EnvVar, ...]
    notes: tuple[str, ...]  # choices worth a line in the output's header
    not_imported: tuple[str, ...]  # property names warned about and left out
    shown_text: str  # the properties text with secret values masked, for showing lines
    # Which property each part of the topology came from (a path and everything under it), so a
    # problem topo finds in the imported topology is shown at the line the user wrote.
    origins: dict[Path, Property]

    @property
    def ok(self) -> bool:
        return self.data is not None


def import_properties(text: str, file: str) -> ImportResult:
    entries, problems = properties.parse(text)
    found = [error("M001", brief(p.message), Span(file, p.line, p.column)) for p in problems]
    return import_entries(entries, text, file, found)


def import_entries(
    entries: list[Property],
    text: str,
    file: str,
    found: Sequence[Diagnostic] = (),
    line_name: Callable[[int], str] = "line {}".format,
) -> ImportResult:
    """The import of MM2 properties read from `file` (mm2.properties, or the properties a
    Strimzi resource or Connect configurations stand for), each placed where `text` has it.
    `found`: what reading the file already found wrong; `line_name`: how to name a line of
    `text` (the files `topo import connect` joins are named with theirs)."""
    shown = properties.mask(text, [e for e in entries if is_secret(e.key)])
    importer = _Importer(file, entries, line_name)
    importer.context.diagnostics.extend(found)
    data = importer.run()
    context = importer.context
    diagnostics = tuple(in_file_order(context.diagnostics))
    return ImportResult(
        data if not has_errors(diagnostics) else None,
        diagnostics,
        tuple(sorted(context.env_vars.values(), key=lambda v: (not v.generated, v.name))),
        tuple(importer.notes),
        tuple(dict.fromkeys(p.key for p in sorted(context.not_imported, key=lambda p: p.line))),
        shown,
        importer.origins,
    )


class _Importer:
    def __init__(self, file: str, entries: list[Property], line_name: Callable[[int], str]) -> None:
        self.props = _last_wins(entries)
        self.context = Context(file, _providers(self.props), line_name)
        self.notes: list[str] = []
        self.origins: dict[Path, Property] = {}
        self.intervals: dict[str, float] = {}  # the top-level intervals, engine.intervals
        self._duplicates(entries)
        self.settings = SettingsReader(self.context)

    def run(self) -> dict[str, Any] | None:
        self._provider_settings()
        clusters_prop = self.props.pop("clusters", None)
        aliases = self._aliases(clusters_prop)
        if clusters_prop is None or not aliases or has_errors(self.context.diagnostics):
            return None  # without usable aliases every other property would be misread
        top, by_cluster, by_flow = self._scopes(aliases)
        global_props, client_defaults = self._top_level(top)
        clusters = {
            alias: import_cluster(
                alias, {**client_defaults, **by_cluster[alias]}, clusters_prop, self.context
            )
            for alias in aliases
        }
        global_settings = self.settings.read(global_props)
        edges = self._edges(aliases, by_flow, global_settings, clusters)
        if not edges:
            if not has_errors(self.context.diagnostics):  # else the errors say why
                self.context.error(
                    "M008",
                    "no flow is enabled: MM2 replicates only flows set with "
                    "<source>-><target>.enabled=true",
                    clusters_prop,
                )
            return None
        defaults = self.settings.defaults(global_settings)
        plans = grouping.group(self._with_overrides(edges, defaults), aliases)
        self._explain(plans)
        self._remember_origins(
            clusters_prop, client_defaults, by_cluster, global_settings, clusters
        )
        self._remember_flow_origins(plans, by_flow, global_settings)
        topology: dict[str, Any] = {
            "version": 1,
            "clusters": {alias: clusters[alias].entry for alias in aliases},
        }
        if self.intervals:
            topology["engine"] = {"intervals": self.intervals}
        if defaults:
            topology["defaults"] = nest(defaults)
        topology["flows"] = [_flow_entry(plan) for plan in plans]
        return topology

    # -- the file -------------------------------------------------------------------------

    def _duplicates(self, entries: list[Property]) -> None:
        first: dict[str, Property] = {}
        for entry in entries:
            if entry.key in first:
                self.context.warn(
                    "M002",
                    f"{entry.key} is set again (first on "
                    f"{self.context.line_name(first[entry.key].line)}); MM2 "
                    "uses this last value",
                    entry,
                )
            first.setdefault(entry.key, entry)

    def _provider_settings(self) -> None:
        for key in [k for k in self.props if k.startswith("config.providers")]:
            prop = self.props.pop(key)
            if key == "config.providers" or re.fullmatch(r"config\.providers\.[^.]+\.class", key):
                continue  # read by _providers: references are translated with them
            self.context.drop(
                "M009",
                f"{key} configures a config provider; topo reads ${{env:NAME}} and "
                "${file:path} itself and has no equivalent",
                prop,
            )

    def _aliases(self, clusters_prop: Property | None) -> list[str]:
        if clusters_prop is None:
            self.context.error(
                "M003", "there is no clusters= property; MM2 requires the list of aliases", None
            )
            return []
        aliases = list(dict.fromkeys(split_list(clusters_prop.value)))
        if not aliases:
            self.context.error("M003", "clusters= is empty; name the clusters", clusters_prop)
        for alias in aliases:
            if not _ALIAS.fullmatch(alias):
                self.context.error(
                    "M004",
                    f"cluster alias '{alias}' cannot be a topo cluster name (a letter or digit, "
                    "then letters, digits, '_' or '-'; at most 64)",
                    clusters_prop,
                )
        return aliases

    def _scopes(
        self, aliases: list[str]
    ) -> tuple[
        dict[str, Property],
        dict[str, dict[str, Property]],
        dict[tuple[str, str], dict[str, Property]],
    ]:
        """Split the properties: top level, per cluster (alias stripped), per flow."""
        top: dict[str, Property] = {}
        by_cluster: dict[str, dict[str, Property]] = {alias: {} for alias in aliases}
        by_flow: dict[tuple[str, str], dict[str, Property]] = defaultdict(dict)
        for key, prop in self.props.items():
            flow = vocabulary.FLOW_KEY.fullmatch(key)
            head, _, rest = key.partition(".")
            if flow:
                by_flow[(flow["source"], flow["target"])][flow["name"]] = prop
            elif head in by_cluster and rest and not _is_top_level(key):
                by_cluster[head][rest] = prop
            else:
                top[key] = prop
        self._unlisted_clusters(top, aliases)
        return top, by_cluster, by_flow

    def _unlisted_clusters(self, top: dict[str, Property], aliases: list[str]) -> None:
        heads = {
            key.partition(".")[0]
            for key in top
            if key.endswith(".bootstrap.servers") and key != "bootstrap.servers"
        }
        for head in sorted(heads):
            keys = [key for key in top if key.startswith(f"{head}.")]
            prop = top[f"{head}.bootstrap.servers"]
            self.context.warn(
                "M006",
                f"cluster '{head}' is configured ({len(keys)} "
                f"propert{'y' if len(keys) == 1 else 'ies'}) but not listed in "
                f"clusters= ({', '.join(aliases)}); MM2 ignores it, and so does the import. Add "
                "it to clusters= to replicate with it",
                prop,
            )
            for key in keys:
                self.context.not_imported.append(top[key])
                del top[key]

    def _top_level(self, top: dict[str, Property]) -> tuple[dict[str, Property], dict[str, Any]]:
        settings: dict[str, Property] = {}
        client_defaults: dict[str, Property] = {}
        for key, prop in top.items():
            if key in vocabulary.MAPPED_SETTINGS:
                settings[key] = prop
            elif key in intervals.DEFAULTS:
                self._interval(key, prop)
            elif key in vocabulary.DEFAULT_PLUGINS:
                self._plugin(key, prop)
            elif vocabulary.CLIENT_DEFAULT_PATTERN.fullmatch(key):
                client_defaults[key] = prop
            elif vocabulary.is_unmapped_setting(key) or vocabulary.is_worker_setting(key):
                self._unmapped(key, prop)
            elif key == "exactly.once.source.support":
                self.context.drop(
                    "M015",
                    f"{key} has no effect at the top level: MM2 reads it per target cluster "
                    "(<alias>.exactly.once.source.support)",
                    prop,
                )
            elif vocabulary.CLIENT_ROLE_PATTERN.fullmatch(key) or key == "enabled":
                self.context.drop(
                    "M015",
                    f"{key} has no effect at the top level: MM2 reads it per cluster "
                    f"(<alias>.{key}) or per flow (<source>-><target>.{key})",
                    prop,
                )
            else:
                self.context.drop(
                    "M010", f"{key} is not an MM2 property topo knows; not imported", prop
                )
        return settings, client_defaults

    def _interval(self, key: str, prop: Property) -> None:
        """A top-level interval: the driver's, `engine.intervals`, in seconds above 0."""
        text = prop.value.strip()
        try:
            seconds = float(text)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds <= 86400 or not text.replace(".", "", 1).isdigit():
            self.context.error("M011", f"{key}: {text!r} is not a number of seconds above 0", prop)
            return
        self.intervals[key] = int(seconds) if seconds.is_integer() else seconds
        self.origins[("engine", "intervals", key)] = prop

    def _unmapped(self, key: str, prop: Property) -> None:
        name = key.split(".", 1)[1] if vocabulary.FLOW_KEY.fullmatch(key) else key
        if name in intervals.DEFAULTS:
            self.context.drop(
                "M009",
                f"{key}: topo's driver does each chore once for every flow; set it at the top "
                f"level ({name}), which becomes engine.intervals",
                prop,
            )
            return
        what = (
            "configures MM2's Connect worker"
            if vocabulary.is_worker_setting(name) and not vocabulary.is_unmapped_setting(name)
            else "tunes MM2's connectors"
        )
        self.context.drop(
            "M009", f"{key} {what}; topo has no equivalent (it decides this itself)", prop
        )

    def _plugin(self, key: str, prop: Property) -> None:
        if prop.value.strip() != vocabulary.DEFAULT_PLUGINS[key]:
            self.context.error(
                "M012",
                f"{prop.key}={prop.value.strip()} is custom code topo cannot run; topo's filters "
                "are the default ones (topics, groups, configs.exclude)",
                prop,
            )

    # -- flows ------------------------------------------------------------------------------

    def _edges(
        self,
        aliases: list[str],
        by_flow: dict[tuple[str, str], dict[str, Property]],
        global_settings: Parsed,
        clusters: dict[str, ClusterSettings],
    ) -> list[grouping.Edge]:
        edges = []
        for (source, target), props in by_flow.items():
            enabled_prop = props.pop("enabled", None)
            enabled = self.settings.boolean(enabled_prop) if enabled_prop else False
            name = f"{source}->{target}"
            unlisted = [alias for alias in (source, target) if alias not in aliases]
            if enabled and unlisted:
                self.context.error(
                    "M007",
                    f"flow {name} is enabled but {' and '.join(unlisted)} "
                    f"{'is' if len(unlisted) == 1 else 'are'} not in clusters= "
                    f"({', '.join(aliases)})",
                    enabled_prop,
                )
                continue
            if not enabled or source == target:
                self._disabled(name, source == target, props)
                continue
            assert enabled_prop is not None
            roles = self._flow_roles(props, source, clusters[source].entry.get("consumer", {}))
            flow_settings = self._flow_props(props)
            settings = self._effective(
                {**global_settings, **flow_settings}, name, clusters, source, target, props
            )
            settings = {**settings, **roles}
            edges.append(grouping.Edge(source, target, settings, {}, enabled_prop.line))
        return edges

    def _disabled(self, name: str, to_itself: bool, props: dict[str, Property]) -> None:
        reason = (
            "MM2 never replicates a cluster to itself"
            if to_itself
            else f"flow {name} is not enabled ({name}.enabled=true)"
        )
        for setting, prop in props.items():
            if setting == "emit.heartbeats.enabled" and not to_itself:
                # MirrorMakerConfig.clusterPairs runs a heartbeat-only herder for such pairs.
                self.context.drop(
                    "M009",
                    f"{prop.key}: MM2 emits heartbeats even for flows that are not enabled; "
                    "topo emits them only on its flows, so this is not imported",
                    prop,
                )
            else:
                self.context.drop("M015", f"{prop.key} has no effect: {reason}", prop)

    def _flow_roles(
        self, props: dict[str, Property], source: str, source_consumer: dict[str, Any]
    ) -> Flat:
        """The flow's own client settings (`<source>-><target>.producer.override.X`, ...), each
        at its path (("producer", X)), unless topo keeps it (M009) or MM2 lets the source's
        own consumer setting win over it (M015); one MM2 gives only its offset-syncs producer
        is imported for the copies, with a warning (M016)."""
        found: Flat = {}
        for name in list(props):
            role = import_roles.role_of(name, flow=True)
            if role is None or name in _START_NAMES or name in _ISOLATION_NAMES:
                continue
            prop = props[name]  # (left there: its origin is remembered with the flow's)
            why = import_roles.not_kept(*role, prop.value.strip())
            if why is not None:
                self.context.drop("M009", f"{prop.key}: {why}; not imported", prop)
                continue
            prefix = import_roles.prefix_of(name)
            if prefix == import_roles.UNDER_CLUSTER and role[1] in source_consumer:
                self.context.drop(
                    "M015",
                    f"{prop.key} has no effect: MM2 gives {source}.consumer.{role[1]} precedence",
                    prop,
                )
                continue
            if prefix in import_roles.MISREAD:
                self.context.warn(
                    "M016",
                    f"{prop.key}: MM2 gives this only to its offset-syncs producer (the copies' "
                    "producer takes <source>-><target>.producer.override.*); topo gives it to "
                    "the flow's copies",
                    prop,
                )
            value = self.context.value(source, ".".join(role), prop.value, prop)
            found[role] = import_clusters.native(value)
        return found

    def _flow_props(self, props: dict[str, Property]) -> Parsed:
        mapped: dict[str, Property] = {}
        for name, prop in props.items():
            if name in vocabulary.MAPPED_SETTINGS:
                mapped[name] = prop
            elif name in vocabulary.DEFAULT_PLUGINS:
                self._plugin(name, prop)
            elif name in _START_NAMES:
                pass  # read with the cluster's own setting in _effective
            elif name in _ISOLATION_NAMES:
                isolation(prop, self.context)
            elif import_roles.role_of(name, flow=True) is not None:
                pass  # the flow's client settings by role (_flow_roles)
            elif vocabulary.is_unmapped_setting(name) or vocabulary.CLIENT_ROLE_PATTERN.fullmatch(
                name
            ):
                self._unmapped(prop.key, prop)
            else:
                self.context.drop(
                    "M010", f"{prop.key}: '{name}' is not an MM2 flow setting topo knows", prop
                )
        return self.settings.read(mapped)

    def _effective(
        self,
        settings: Parsed,
        name: str,
        clusters: dict[str, ClusterSettings],
        source: str,
        target: str,
        props: dict[str, Property],
    ) -> Flat:
        flat: Flat = {**vocabulary.MM2_DEFAULTS, **self.settings.to_topo(settings, name)}
        # MirrorSourceConfig.sourceConsumerConfig: flow consumer.*, then source.consumer.*
        # (which the source cluster's own consumer.* feeds), the flow's own last.
        start = None
        if "consumer.auto.offset.reset" in props:
            start = start_from(props["consumer.auto.offset.reset"], self.context) or start
        start = clusters[source].start or start
        if "source.consumer.auto.offset.reset" in props:
            start = start_from(props["source.consumer.auto.offset.reset"], self.context) or start
        if start:
            flat[("start",)] = start
        if clusters[target].exactly_once:
            flat[("delivery",)] = "exactly-once"
        return flat

    def _with_overrides(self, edges: list[grouping.Edge], defaults: Flat) -> list[grouping.Edge]:
        base = {**vocabulary.TOPO_DEFAULTS, **defaults}
        return [
            grouping.Edge(
                edge.source,
                edge.target,
                edge.settings,
                {p: v for p, v in edge.settings.items() if p not in base or v != base[p]},
                edge.order,
            )
            for edge in edges
        ]

    # -- where each part of the topology came from ---------------------------------------------

    def _remember_origins(
        self,
        clusters_prop: Property,
        client_defaults: dict[str, Property],
        by_cluster: dict[str, dict[str, Property]],
        global_settings: Parsed,
        clusters: dict[str, ClusterSettings],
    ) -> None:
        self.origins[()] = clusters_prop
        for alias, own in by_cluster.items():
            props = {**client_defaults, **own}
            here: Path = ("clusters", alias)
            self.origins[here] = props.get("bootstrap.servers", clusters_prop)
            self.origins[(*here, "bootstrap")] = self.origins[here]
            for name, prop in {**props, **clusters[alias].client_origins}.items():
                self.origins[(*here, "client", name)] = prop
            for (role, key), prop in clusters[alias].role_origins.items():
                self.origins[(*here, role, key)] = prop
            for under, names in _SECURITY_ORIGINS.items():
                found = [props[name] for name in names if name in props]
                if found:
                    self.origins[(*here, "security", *under)] = found[0]
        for name, (_, prop) in global_settings.items():
            path = setting_path(name)
            if path is not None:
                self.origins[("defaults", *path)] = prop

    def _remember_flow_origins(
        self,
        plans: list[grouping.FlowPlan],
        by_flow: dict[tuple[str, str], dict[str, Property]],
        global_settings: Parsed,
    ) -> None:
        for index, plan in enumerate(plans):
            here: Path = ("flows", index)
            first = plan.edges[0]
            enabled = self.props.get(f"{first.source}->{first.target}.enabled")
            if enabled is not None:
                self.origins[here] = enabled
            for edge in plan.edges:
                for name, prop in by_flow.get((edge.source, edge.target), {}).items():
                    path = setting_path(name) or import_roles.role_of(name, flow=True)
                    if path is not None:
                        self.origins.setdefault((*here, *path), prop)
            for name, (_, prop) in global_settings.items():
                path = setting_path(name)
                if path is not None:
                    self.origins.setdefault((*here, *path), prop)

    def _explain(self, plans: list[grouping.FlowPlan]) -> None:
        edges = [edge for plan in plans for edge in plan.edges]
        for plan in plans:
            if plan.kind == "aggregate":
                self.notes.append(
                    f"{plan.name}: identity naming merges same-named topics on {plan.target}, "
                    "as MM2 did; imported as an aggregate flow, which declares that merge"
                )
        for loop in grouping.identity_loops([(e.source, e.target, e.identity) for e in edges]):
            first = min(
                (e for e in edges if e.source in loop and e.target in loop), key=lambda e: e.order
            )
            message = (
                f"clusters {', '.join(loop)} form a loop with IdentityReplicationPolicy: MM2 "
                "copies records around it forever; topo stops them with its provenance header, "
                "so each record reaches each cluster once"
            )
            self.context.warn(
                "M016", message, self.props.get(f"{first.source}->{first.target}.enabled")
            )
            self.notes.append(message)


# The properties a cluster's security settings come from, the likeliest first.
_SECURITY_ORIGINS: dict[tuple[str, ...], tuple[str, ...]] = {
    (): ("security.protocol", "sasl.mechanism", "sasl.jaas.config"),
    ("protocol",): ("security.protocol",),
    ("sasl",): ("sasl.jaas.config", "sasl.mechanism"),
    ("sasl", "mechanism"): ("sasl.mechanism", "sasl.jaas.config"),
    ("sasl", "username"): ("sasl.jaas.config",),
    ("sasl", "password"): ("sasl.jaas.config",),
    ("tls",): ("ssl.truststore.location", "ssl.keystore.location"),
    ("tls", "ca"): ("ssl.truststore.location",),
    ("tls", "cert"): ("ssl.keystore.location",),
    ("tls", "key"): ("ssl.keystore.location",),
    ("tls", "key_password"): ("ssl.key.password",),
}


# -- helpers ------------------------------------------------------------------------------


def _last_wins(entries: list[Property]) -> dict[str, Property]:
    props: dict[str, Property] = {}
    for entry in entries:
        props.pop(entry.key, None)  # keep file order of the value MM2 uses
        props[entry.key] = entry
    return props


def _providers(props: dict[str, Property]) -> dict[str, str]:
    declared = props.get("config.providers")
    aliases = split_list(declared.value) if declared else []
    return {
        alias: props[f"config.providers.{alias}.class"].value.strip()
        for alias in aliases
        if f"config.providers.{alias}.class" in props
    }


def _is_top_level(key: str) -> bool:
    return (
        key in vocabulary.MAPPED_SETTINGS
        or vocabulary.is_unmapped_setting(key)
        or vocabulary.is_worker_setting(key)
    )


def nest(flat: Flat) -> dict[str, Any]:
    """Flat setting paths -> the nested mappings a topology file holds, in SETTING_PATHS order,
    then the client settings by role (("producer", "linger.ms") -> producer: {linger.ms: ...})."""
    nested: dict[str, Any] = {}
    for path in vocabulary.SETTING_PATHS:
        if path not in flat:
            continue
        value = list(flat[path]) if isinstance(flat[path], tuple) else flat[path]
        if len(path) == 1:
            nested[path[0]] = value
        else:
            nested.setdefault(path[0], {})[path[1]] = value
    for path in sorted(p for p in flat if p not in vocabulary.SETTING_PATHS):  # roles, last
        nested.setdefault(path[0], {})[path[1]] = flat[path]
    return nested


def _flow_entry(plan: grouping.FlowPlan) -> dict[str, Any]:
    entry: dict[str, Any]
    if plan.kind == "active-active":
        entry = {"active-active": list(plan.sources)}
    elif plan.kind == "aggregate":
        entry = {"aggregate": {"from": list(plan.sources), "into": plan.target}}
    else:
        entry = {"mirror": {"from": plan.sources[0], "to": plan.target}}
    return {**entry, **nest(dict(plan.overrides))}
