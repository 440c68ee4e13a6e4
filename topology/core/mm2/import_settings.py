"""MM2's connector settings -> topo's flow settings, each value checked once.

The same property is read for every flow it applies to (a global `topics` for each enabled
flow); `SettingsReader` parses each property once and reports each problem once, then turns
a flow's merged settings (global, overridden by the flow's) into topo setting paths.
"""

import re
from typing import Any

from topology.core import patterns
from topology.core.mm2 import vocabulary
from topology.core.mm2.import_context import Context
from topology.core.mm2.properties import Property
from topology.core.mm2.vocabulary import SettingPath

Flat = dict[SettingPath, Any]
Parsed = dict[str, tuple[Any, Property]]  # MM2 name -> (parsed value, where it was set)
_SEPARATOR = re.compile(r"[A-Za-z0-9._-]{1,8}")


class SettingsReader:
    def __init__(self, context: Context) -> None:
        self.context = context
        self._reported: set[tuple[str, int, str]] = set()

    def defaults(self, global_settings: Parsed) -> Flat:
        """The topology's defaults: the global properties, and where MM2's defaults differ."""
        flat = self.to_topo(global_settings, None)
        defaults: Flat = {}
        for path in vocabulary.SETTING_PATHS:
            value = flat.get(path, vocabulary.MM2_DEFAULTS[path])
            if value != vocabulary.TOPO_DEFAULTS[path]:
                defaults[path] = value
        return defaults

    def read(self, props: dict[str, Property]) -> Parsed:
        """Parsed values of mapped connector settings, each checked once."""
        read: Parsed = {}
        for name, prop in props.items():
            value: Any
            if name in vocabulary.LIST_SETTINGS or name in vocabulary.OLD_NAMES:
                value = self._regexes(prop)
                if name in vocabulary.OLD_NAMES:
                    self._old_name(name, prop)
            elif name in vocabulary.BOOLEAN_SETTINGS:
                value = self.boolean(prop)
            elif name == vocabulary.REPLICATION_FACTOR:
                value = self._replication_factor(prop)
            elif name == vocabulary.POLICY_CLASS:
                value = self._naming(prop)
            else:
                value = self._separator(prop)
            read[name] = (value, prop)
        return read

    def to_topo(self, settings: Parsed, flow: str | None) -> Flat:
        """MM2 settings (global, or global+flow merged) -> topo setting paths."""
        settings = dict(settings)
        for old, new in vocabulary.OLD_NAMES.items():
            if old not in settings:
                continue
            old_value, old_prop = settings.pop(old)
            if new in settings:
                self._once(
                    "M015",
                    f"{old_prop.key} has no effect{f' on flow {flow}' if flow else ''}: "
                    f"{settings[new][1].key} is set, and MM2 prefers the new name",
                    old_prop,
                )
            else:
                settings[new] = (old_value, old_prop)
        flat: Flat = {}
        for name, (value, prop) in settings.items():
            if name == "config.properties.exclude":
                flat[("configs", "exclude")] = self._config_excludes(value, prop)
            elif name in vocabulary.LIST_SETTINGS:
                flat[vocabulary.LIST_SETTINGS[name]] = value
            elif name in vocabulary.BOOLEAN_SETTINGS:
                flat[vocabulary.BOOLEAN_SETTINGS[name]] = value
                if name == "refresh.topics.enabled" and value is False:
                    self._once(
                        "M016",
                        f"{prop.key}=false also stops MM2 from finding new topics; topo maps it "
                        "to sync.partitions: false, which only stops growing partitions, and "
                        "still picks up new topics",
                        prop,
                    )
            elif name == vocabulary.REPLICATION_FACTOR:
                flat[("replication_factor",)] = value
            elif name == vocabulary.POLICY_CLASS:
                flat[("naming",)] = value
            elif name == vocabulary.SEPARATOR:
                flat[("separator",)] = value
        return flat

    def _config_excludes(self, value: tuple[str, ...], prop: Property) -> tuple[str, ...]:
        defaults = {_plain(p) for p in vocabulary.DEFAULT_CONFIG_EXCLUDES}
        given = {_plain(p) for p in value}
        missing = sorted(defaults - given)
        if missing:
            self._once(
                "M016",
                f"{prop.key} leaves out {', '.join(missing)}, which MM2 then copies; topo never "
                "copies MM2's default exclusions",
                prop,
            )
        return tuple(p for p in value if _plain(p) not in defaults)

    def _old_name(self, name: str, prop: Property) -> None:
        new = vocabulary.OLD_NAMES[name]
        self._once(
            "M013",
            f"{prop.key} is the old name of {new} (KIP-629); Kafka 4.0 removed it "
            f"(KAFKA-17529), so MM2 4.x ignores it. Imported as {new}, as MM2 3.x reads it",
            prop,
        )

    def _regexes(self, prop: Property) -> tuple[str, ...]:
        regexes = tuple(split_list(prop.value))
        for regex in regexes:
            reason = patterns.problem(regex)
            if reason:
                verdict = "is not a valid regex" if patterns.is_invalid(regex) else "cannot be used"
                self._once("M011", f"{prop.key}: '{regex}' {verdict}: {reason}", prop)
        return regexes

    def boolean(self, prop: Property) -> bool:
        value = prop.value.strip().lower()
        if value not in ("true", "false"):
            self._once("M011", f"{prop.key}: '{prop.value.strip()}' is not true or false", prop)
        return value == "true"

    def _replication_factor(self, prop: Property) -> int | None:
        text = prop.value.strip()
        if text == "-1":
            return None  # the broker's default.replication.factor
        if not re.fullmatch(r"[0-9]{1,9}", text) or not 1 <= int(text) <= 32:
            self._once(
                "M011", f"{prop.key}: '{text}' is not a replication factor (1-32, or -1)", prop
            )
            return None
        return int(text)

    def _naming(self, prop: Property) -> str:
        naming = vocabulary.POLICY_NAMING.get(prop.value.strip())
        if naming is None:
            self._once(
                "M012",
                f"{prop.key}={prop.value.strip()} is a custom replication policy; topo names "
                "remote topics by prefix (DefaultReplicationPolicy) or identity "
                "(IdentityReplicationPolicy) only",
                prop,
            )
            return "prefix"
        return naming

    def _separator(self, prop: Property) -> str:
        separator = prop.value  # MM2 does not trim it
        if not _SEPARATOR.fullmatch(separator):
            self._once(
                "M011",
                f"{prop.key}: '{separator}' cannot be a topo separator (1-8 of letters, digits, "
                "'.', '_', '-')",
                prop,
            )
        return separator

    def _once(self, code: str, message: str, prop: Property) -> None:
        """Settings are read for every flow they apply to; report each problem once."""
        if (code, prop.line, message) in self._reported:
            return
        self._reported.add((code, prop.line, message))
        if code == "M015":
            self.context.drop(code, message, prop)
        elif code == "M011" or code == "M012":
            self.context.error(code, message, prop)
        else:
            self.context.warn(code, message, prop)


def setting_path(name: str) -> SettingPath | None:
    """Where a mapped MM2 setting lands in a topology (`topics` -> ("topics", "include"))."""
    name = vocabulary.OLD_NAMES.get(name, name)
    if name in vocabulary.LIST_SETTINGS:
        return vocabulary.LIST_SETTINGS[name]
    if name in vocabulary.BOOLEAN_SETTINGS:
        return vocabulary.BOOLEAN_SETTINGS[name]
    return _SCALAR_PATHS.get(name)


_SCALAR_PATHS: dict[str, SettingPath] = {
    vocabulary.REPLICATION_FACTOR: ("replication_factor",),
    vocabulary.POLICY_CLASS: ("naming",),
    vocabulary.SEPARATOR: ("separator",),
}


def split_list(value: str) -> list[str]:
    """ConfigDef LIST: split at commas, trim; empty entries match nothing and are dropped."""
    return [part.strip() for part in value.split(",") if part.strip()]


def _plain(pattern: str) -> str:
    """A config-name regex as the name it matches, so `min.insync.replicas` equals the escaped."""
    return patterns.literal(pattern) or pattern
