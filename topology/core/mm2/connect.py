"""MirrorMaker 2's connectors as Kafka Connect runs them -> the MM2 properties they stand for.

On a Connect cluster, MM2 is three connectors per flow, each configured alone (Connect's REST
API: `POST /connectors` with `{"name": ..., "config": {...}}`, `PUT /connectors/NAME/config`
with the config itself): `MirrorSourceConnector` copies, `MirrorCheckpointConnector` translates
group offsets, `MirrorHeartbeatConnector` emits heartbeats. Each names its two clusters
(`source.cluster.alias`, `target.cluster.alias`, by default `source` and `target`) and carries
its own copy of their client settings (`source.cluster.*`, `target.cluster.*`, as
MirrorConnectorConfig reads them); every other key is the flow's, as in mm2.properties.

Read here as the dedicated-mode properties of the same flows (see `stand_in`). The files are
read as one text, each after the last, so every entry keeps its place; `Sources` says which
file a line is in.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from topology.core import intervals
from topology.core.diagnostics import Diagnostic, Span
from topology.core.mm2 import vocabulary
from topology.core.mm2.import_clusters import is_secret
from topology.core.mm2.stand_in import Gathered, StandIn, text
from topology.core.source import Document, Path, parse

_PACKAGE = "org.apache.kafka.connect.mirror."
SOURCE, CHECKPOINT, HEARTBEAT = (
    "MirrorSourceConnector",
    "MirrorCheckpointConnector",
    "MirrorHeartbeatConnector",
)
_SWITCHES = {CHECKPOINT: "emit.checkpoints.enabled", HEARTBEAT: "emit.heartbeats.enabled"}
# What Connect reads for itself, not MM2: the connector's name and class, and the aliases.
_OWN = {"name", "connector.class", "source.cluster.alias", "target.cluster.alias"}
_CLUSTER_PREFIXES = {"source.cluster.": "source", "target.cluster.": "target"}
# mm2.properties' own keys, which a connector ignores (besides <source>-><target>.* keys).
_DEDICATED_ONLY = {"clusters", "enabled"}
# How Connect turns records into bytes and back: MM2's copies are bytes as they came only with
# ByteArrayConverter, which is what topo does.
_CONVERTERS = ("key.converter", "value.converter", "header.converter")
_BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
# A Connect worker's own topics, where `connect-distributed.properties` puts them.
OFFSETS_TOPIC = "connect-offsets"
STATUS_TOPIC = "connect-status"


@dataclass(frozen=True)
class Sources:
    """The files read as one text: each file's name and the line it starts at (1-based)."""

    files: tuple[tuple[str, int], ...]

    def place(self, span: Span) -> Span:
        """The span in the file its line is in, counted from that file's first line."""
        name, first = self.files[0]
        for file, start in self.files:
            if span.line >= start:
                name, first = file, start
        return Span(name, span.line - first + 1, span.column)

    def line_name(self, line: int) -> str:
        """How a message names a line of the joined text: `cp.json line 3`."""
        span = self.place(Span("", line, 1))
        return f"{span.file} line {span.line}"

    def documents(self, whole: str) -> dict[str, Document]:
        """Each file's part of `whole` (the joined text, or a copy of it), by file name."""
        lines = whole.splitlines()
        bounds = [*self.files, ("", len(lines) + 1)]
        return {
            name: Document(name, "\n".join(lines[first - 1 : after - 1]), None)
            for (name, first), (_, after) in itertools.pairwise(bounds)
        }

    def placed(self, diagnostic: Diagnostic) -> Diagnostic:
        return Diagnostic(
            diagnostic.severity,
            diagnostic.code,
            diagnostic.message,
            self.place(diagnostic.span),
            secret=diagnostic.secret,
        )


@dataclass(frozen=True)
class Connector:
    name: str
    kind: str  # SOURCE, CHECKPOINT or HEARTBEAT
    config: dict[str, Any]
    at: Path  # where its config is in its document
    document: Document
    source: str  # its flow's clusters
    target: str

    @property
    def flow(self) -> str:
        return f"{self.source}->{self.target}"


def joined(files: Sequence[tuple[str, str]]) -> tuple[str, Sources]:
    """The texts of `files` (name, text) as one, each starting on a line of its own."""
    parts: list[str] = []
    starts: list[tuple[str, int]] = []
    line = 1
    for name, content in files:
        starts.append((name, line))
        part = content if content.endswith("\n") else content + "\n"
        parts.append(part)
        line += part.count("\n")
    return "".join(parts), Sources(tuple(starts))


def read(
    files: Sequence[tuple[str, str]],
    *,
    offsets_topic: str = OFFSETS_TOPIC,
    status_topic: str = STATUS_TOPIC,
) -> tuple[StandIn, str, Sources]:
    """What the connector configurations in `files` (name, text) stand for, the one text the
    import reads (the files joined) and which file each line of it is in."""
    whole, sources = joined(files)
    stand_in = StandIn(files[0][0], Document(files[0][0], whole, None))
    connectors: list[Connector] = []
    for (name, content), (_, first_line) in zip(files, sources.files, strict=True):
        # Parsed at its lines in the joined text: the places of its entries are the joined
        # text's, and `sources` says which file they are in.
        document, problems = parse("\n" * (first_line - 1) + content, name)
        stand_in.diagnostics.extend(problems)
        if not problems:
            stand_in.document = document
            connectors += _connectors(stand_in, name, document)
    if not stand_in.diagnostics:
        _Flows(stand_in, connectors).run(offsets_topic, status_topic)
    return stand_in, whole, sources


def _connectors(stand_in: StandIn, file: str, document: Document) -> list[Connector]:
    """The MM2 connectors a file holds: one connector (`{"name", "config"}` as POST /connectors
    takes and GET /connectors/NAME gives, or the bare config PUT /connectors/NAME/config
    takes, then named after the file), a list of them, or GET /connectors?expand=info's map."""
    data = document.data
    found: list[tuple[str | None, Any, Path]] = []
    if isinstance(data, list):
        for index, item in enumerate(data):
            found += _one(item, (index,), None)
    elif isinstance(data, dict) and "connector.class" not in data and "config" not in data:
        for key, item in data.items():  # {NAME: {"info": {...}, "status": {...}}}
            info = item.get("info") if isinstance(item, dict) else None
            found += _one(info, (key, "info"), str(key)) if info is not None else []
    else:
        found += _one(data, (), None)
    if not found:
        stand_in.error(
            "M022",
            f"{file} holds no Kafka Connect connector configuration (a JSON object with "
            'connector.class, or {"name": ..., "config": {...}})',
            (),
        )
        return []
    stem = file.rsplit("/", 1)[-1].removesuffix(".json")
    connectors = []
    for name, config, at in found:
        connector = _connector(stand_in, name or stem, config, at, document)
        if connector is not None:
            connectors.append(connector)
    return connectors


def _one(item: Any, at: Path, name: str | None) -> list[tuple[str | None, Any, Path]]:
    if isinstance(item, dict) and isinstance(item.get("config"), dict):
        given = item.get("name")
        return [(text(given) if given else name, item["config"], (*at, "config"))]
    if isinstance(item, dict) and "connector.class" in item:
        return [(text(item.get("name")) or name, item, at)]
    return []


def _connector(
    stand_in: StandIn, name: str, config: dict[str, Any], at: Path, document: Document
) -> Connector | None:
    kind = text(config.get("connector.class")).removeprefix(_PACKAGE)
    if kind not in (SOURCE, CHECKPOINT, HEARTBEAT):
        stand_in.error(
            "M022",
            f"connector {name} is a {kind or 'connector without connector.class'}, not one of "
            f"MirrorMaker 2's ({SOURCE}, {CHECKPOINT}, {HEARTBEAT})",
            (*at, "connector.class"),
        )
        return None
    source = text(config.get("source.cluster.alias", "source")).strip()
    target = text(config.get("target.cluster.alias", "target")).strip()
    return Connector(name, kind, config, at, document, source, target)


class _Flows:
    def __init__(self, stand_in: StandIn, connectors: list[Connector]) -> None:
        self.out = stand_in
        self.connectors = connectors
        self.gathered = Gathered(stand_in)

    def run(self, offsets_topic: str, status_topic: str) -> None:
        kinds: dict[str, set[str]] = {}
        for connector in self.connectors:
            kinds.setdefault(connector.flow, set()).add(connector.kind)
        aliases: dict[str, None] = {}
        names: dict[str, str] = {}  # flow -> its source connector's name
        for connector in self.connectors:
            self.out.document = connector.document
            if SOURCE not in kinds[connector.flow]:
                if connector.kind == CHECKPOINT or connector.kind == HEARTBEAT:
                    self.out.warn(
                        "M023",
                        f"flow {connector.flow} has no {SOURCE}, so MM2 copies no topic for "
                        f"it; a topo flow always copies, so {connector.name} is not imported",
                        (*connector.at, "connector.class"),
                    )
                continue
            aliases.update(dict.fromkeys((connector.source, connector.target)))
            self._connector(connector, kinds[connector.flow])
            if connector.kind == SOURCE:
                names.setdefault(connector.flow, connector.name)
        if not aliases:
            return
        first = self.connectors[0]
        self.out.document = first.document
        self.out.put("clusters", ", ".join(aliases), (*first.at, "connector.class"))
        self.gathered.write()
        self._connect_state(names, offsets_topic, status_topic)

    def _connector(self, connector: Connector, kinds: set[str]) -> None:
        flow, name, at = connector.flow, connector.name, connector.at
        gathered = self.gathered
        if connector.kind == SOURCE:
            gathered.flow(flow, "enabled", "true", (*at, "connector.class"), name)
            for kind, switch in _SWITCHES.items():
                if kind not in kinds:
                    gathered.flow(flow, switch, "false", (*at, "connector.class"), f"no {kind}")
        for key, value in connector.config.items():
            place: Path = (*at, key)
            if is_secret(key):  # shown masked, whether it is imported or left out
                self.out.hide(key, text(value), place)
            if key in _OWN or self._connect_setting(connector, key, text(value), place):
                continue
            if key in _DEDICATED_ONLY or vocabulary.FLOW_KEY.fullmatch(key):
                self.out.warn(
                    "M015",
                    f"{connector.name}: {key} has no effect in a connector's configuration "
                    "(MM2 reads it in mm2.properties, in dedicated mode); not imported",
                    place,
                )
                continue
            side = next((p for p in _CLUSTER_PREFIXES if key.startswith(p)), None)
            if side is not None:
                alias = connector.source if side == "source.cluster." else connector.target
                gathered.cluster(
                    alias, key.removeprefix(side), text(value), place, f"connector {name}"
                )
            elif key in intervals.DEFAULTS:
                gathered.interval(key, text(value), place, f"connector {name}")
            else:
                gathered.flow(flow, key, text(value), place, f"connector {name}")

    def _connect_setting(self, connector: Connector, key: str, value: str, at: Path) -> bool:
        """Connect's own setting of how a connector's records are changed: said, not imported.
        True when `key` is one."""
        if key == "tasks.max" and connector.kind != SOURCE:
            return True  # Connect's parallelism for a connector that copies nothing; the
            # source connector's is said (M009): topo sizes its copy slots itself
        if key in _CONVERTERS:
            if value.strip() not in (_BYTES, _BYTES.rsplit(".", 1)[-1]):
                self.out.warn(
                    "M016",
                    f"{connector.name}: {key} is {value.strip()}, so MM2's copies were "
                    "converted with it; topo copies each record byte for byte, as "
                    "ByteArrayConverter does",
                    at,
                )
            return True
        if key.startswith(_CONVERTERS) or key in ("transforms", "predicates"):
            if key in ("transforms", "predicates") and value.strip():
                self.out.warn(
                    "M016",
                    f"{connector.name}: {key} {value.strip()} changed MM2's copies; topo copies "
                    "records as they are, so they are not imported",
                    at,
                )
            return True
        return key.startswith(("transforms.", "predicates."))

    def _connect_state(self, names: dict[str, str], offsets_topic: str, status_topic: str) -> None:
        """The flows' `mm2` setting: the Connect worker's topics, and the source connectors'
        name as a pattern of the flow's clusters, when one pattern names them all."""
        patterns = {
            name.replace(flow.split("->")[0], "{source}", 1).replace(
                flow.split("->")[1], "{target}", 1
            )
            if len(names) > 1
            else name
            for flow, name in names.items()
        }
        state = {"offsets_topic": offsets_topic, "status_topic": status_topic}
        if len(patterns) == 1:
            state["connector"] = patterns.pop()
        else:
            self.out.notes.append(
                "The source connectors' names follow no one pattern of their clusters' aliases "
                f"({', '.join(sorted(names.values()))}); give each flow its mm2.connector "
                "before start: mm2 or topo status read them"
            )
        self.out.connect_state = state
        self.out.notes.append(
            f"MM2's Connect worker is taken to keep its state in {offsets_topic} and "
            f"{status_topic} on each flow's target cluster (defaults.mm2); if its "
            "offset.storage.topic and status.storage.topic differ, say so there"
        )
