"""The resolved topology: frozen values with every default applied, ready for analysis.

`Topology` is what the graph analysis, the diff and (later) the planner read. It is built from a
checked document by `topology.core.resolve`; nothing here does I/O or validation.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from topology.core import patterns
from topology.core.diagnostics import Span


class Naming(StrEnum):
    PREFIX = "prefix"
    IDENTITY = "identity"


class FlowKind(StrEnum):
    MIRROR = "mirror"
    ACTIVE_ACTIVE = "active-active"
    AGGREGATE = "aggregate"


@dataclass(frozen=True)
class NameFilter:
    """Full-match include/exclude regexes, MM2's topic and group filter semantics."""

    include: tuple[str, ...]
    exclude: tuple[str, ...]

    @cached_property
    def _include(self) -> patterns.Matcher:
        return patterns.Matcher(self.include)

    @cached_property
    def _exclude(self) -> patterns.Matcher:
        return patterns.Matcher(self.exclude)

    @cached_property
    def literals(self) -> frozenset[str] | None:
        """The exact names the includes allow, or None when any include is a real regex."""
        names = [patterns.literal(p) for p in self.include]
        return None if None in names else frozenset(n for n in names if n is not None)

    def admits(self, name: str) -> bool:
        """In bounded time, whatever the patterns: topology.core.patterns matches with RE2, or
        with a time limit per match (SlowPatternError past it) for what RE2 cannot take."""
        return self._include.matches(name) and not self._exclude.matches(name)

    def to_dict(self) -> dict[str, list[str]]:
        return {"include": list(self.include), "exclude": list(self.exclude)}


@dataclass(frozen=True)
class Sync:
    configs: bool = True
    partitions: bool = True
    acls: bool = True
    group_offsets: bool = True


@dataclass(frozen=True)
class Emit:
    heartbeats: bool = True
    checkpoints: bool = True


@dataclass(frozen=True)
class Mm2State:
    """Where the MirrorMaker 2 a flow takes over from (`start: mm2`) or hands back to (`topo
    export mm2 --positions`) keeps its Connect state, on the flow's target cluster: its offsets
    and status topics and its source connector's name. `{source}` and `{target}` stand for the
    flow's cluster aliases. The defaults are MM2's dedicated mode (connect-mirror-maker.sh); MM2
    run as connectors on a Connect cluster has that cluster's topics and its own names."""

    offsets_topic: str = "mm2-offsets.{source}.internal"
    status_topic: str = "mm2-status.{source}.internal"
    connector: str = "MirrorSourceConnector"


@dataclass(frozen=True)
class Objectives:
    """What a flow promises (docs/objectives.md), each bound None when not declared: the most
    lag in seconds and in records, the oldest the newest heartbeat copied and the newest
    checkpoint written may be, and the fewest records a second it copies while records wait.
    An objective is breached once its measure has been past its bound for `for_seconds` on end;
    the driver's /readyz, `topo status`, the dashboards and the rules of `topo export alerts`
    all judge so."""

    lag_seconds: float | None = None
    lag_records: int | None = None
    heartbeat_age_seconds: float | None = None
    checkpoint_age_seconds: float | None = None
    min_records_per_second: float | None = None
    for_seconds: float = 60.0

    def declared(self) -> dict[str, float]:
        """The bounds set, by name, in the order above."""
        found = {
            "lag_seconds": self.lag_seconds,
            "lag_records": self.lag_records,
            "heartbeat_age_seconds": self.heartbeat_age_seconds,
            "checkpoint_age_seconds": self.checkpoint_age_seconds,
            "min_records_per_second": self.min_records_per_second,
        }
        return {name: float(bound) for name, bound in found.items() if bound is not None}


@dataclass(frozen=True)
class FlowSettings:
    """Everything a flow decides besides its endpoints; defaults applied."""

    topics: NameFilter
    groups: NameFilter
    naming: Naming = Naming.PREFIX
    separator: str = "."
    # MM2's replication.policy.internal.topic.separator.enabled: internal topics' names joined
    # by the separator (true, MM2's default) or by `.`
    internal_separator: bool = True
    replication_factor: int | None = None
    sync: Sync = Sync()
    emit: Emit = Emit()
    config_exclude: tuple[str, ...] = ()
    delivery: str = "at-least-once"
    start: str = "earliest"
    filter: str | None = None
    provenance: bool = True
    mm2: Mm2State = Mm2State()
    objectives: Objectives = Objectives()
    # Records the source no longer holds when the copy comes to them (retention, a topic made
    # again): `alert` counts and reports each loss and copies on from the oldest record; `stop`
    # stops the flow there.
    on_loss: str = "alert"
    # Copy slots (MM2's tasks.max): each a long-running Spark task holding some of the flow's
    # source partitions; None: sized from its partitions and the cores (`copy_slots`).
    tasks: int | None = None
    # Not copied while true (a plan change): its slots stop with their positions committed,
    # which `topo reset` may then move; false again resumes from them.
    paused: bool = False
    # The flow's own client settings by role (`consumer`, `producer`; `client_roles`), over its
    # clusters' sections of the same role.
    roles: Mapping[str, Mapping[str, str | int | float | bool]] = field(default_factory=dict)

    def remote_name(self, source: str, topic: str) -> str:
        """The topic's name on the target when replicated from `source` (MM2's policies)."""
        if self.naming is Naming.IDENTITY:
            return topic
        return f"{source}{self.separator}{topic}"


@dataclass(frozen=True)
class Edge:
    """One direction of replication: a flow expanded to a (source, target) pair."""

    source: str
    target: str
    flow: int
    settings: FlowSettings = field(compare=False)
    merges: bool = False  # aggregate, or identity active-active: same-named topics merge by design

    @property
    def name(self) -> str:
        return f"{self.source}->{self.target}"


@dataclass(frozen=True)
class Flow:
    index: int
    kind: FlowKind
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    settings: FlowSettings
    span: Span = field(compare=False)

    @property
    def name(self) -> str:
        """How people refer to the flow: east->west, east<->west, [east, west]->central."""
        if self.kind is FlowKind.ACTIVE_ACTIVE:
            return "<->".join(self.sources)
        if self.kind is FlowKind.AGGREGATE:
            return f"[{', '.join(self.sources)}]->{self.targets[0]}"
        return f"{self.sources[0]}->{self.targets[0]}"

    @property
    def edge_count(self) -> int:
        """How many edges `edges()` makes, without making them (a mesh of n has n * (n - 1))."""
        pairs = len(self.sources) * len(self.targets)
        if self.kind is FlowKind.ACTIVE_ACTIVE:
            pairs -= len(set(self.sources) & set(self.targets))
        return pairs

    def edges(self) -> list[Edge]:
        merges = self.kind is FlowKind.AGGREGATE or (
            self.kind is FlowKind.ACTIVE_ACTIVE and self.settings.naming is Naming.IDENTITY
        )
        return [
            Edge(source, target, self.index, self.settings, merges)
            for source in self.sources
            for target in self.targets
            if self.kind is not FlowKind.ACTIVE_ACTIVE or source != target
        ]


@dataclass(frozen=True)
class Sasl:
    mechanism: str
    username: str | None = None
    password: str | None = None


@dataclass(frozen=True)
class KeyStore:
    """A Java key store file (JKS or PKCS#12), as enterprise `mm2.properties` name them: read
    where a client needs PEM, never written out in clear."""

    path: str
    password: str | None = None  # a secret reference
    type: str | None = None  # JKS or PKCS12; None: the file says which
    key_password: str | None = None  # a key store's key, when not the store's password


@dataclass(frozen=True)
class Tls:
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    key_password: str | None = None
    verify_hostname: bool = True
    truststore: KeyStore | None = None  # instead of `ca`
    keystore: KeyStore | None = None  # instead of `cert` and `key`

    def stores(self) -> tuple[tuple[str, KeyStore], ...]:
        """The Java key stores given, by their key (`truststore`, `keystore`)."""
        given = (("truststore", self.truststore), ("keystore", self.keystore))
        return tuple((kind, store) for kind, store in given if store is not None)


STORES = ("truststore", "keystore")  # `Tls`'s Java key stores


@dataclass(frozen=True)
class Security:
    protocol: str = "PLAINTEXT"
    sasl: Sasl | None = None
    tls: Tls | None = None


@dataclass(frozen=True)
class Cluster:
    name: str
    bootstrap: str
    security: Security
    client: Mapping[str, str | int | float | bool]
    topics: tuple[str, ...]
    span: Span = field(compare=False)
    # Client settings by role (`consumer`, `producer`, `admin`; `client_roles`), over `client`.
    roles: Mapping[str, Mapping[str, str | int | float | bool]] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricsEndpoint:
    """The running driver's HTTP endpoint (docs/metrics.md): /metrics, /healthz, /readyz and
    /history. When `port` is taken the driver takes a free one and says so."""

    bind: str = "127.0.0.1"
    port: int = 9464  # Prometheus' registry of exporter ports has 9464 for OpenTelemetry's
    ready_lag: int = 100_000  # records a flow may wait on and still be ready


@dataclass(frozen=True)
class Engine:
    """Where replication jobs run: `local` (Spark local[*] here, under a supervisor topo
    starts), a `spark` cluster master, `external` (a supervisor the user runs, such as systemd,
    runs `topo run`; apply only publishes the jobs) or `none`."""

    runner: str = "local"
    master: str = "local[*]"
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    # Where Spark keeps each flow's checkpoint: any Hadoop-compatible URI (hdfs://, s3a://,
    # file:///...); None is the state folder on the machine the driver runs on.
    checkpoints: str | None = None
    # The cluster whose `topo-runs.internal` holds the running replication's state (jobs, lease,
    # status, stop requests); None is the target of the topology's first edge.
    state_cluster: str | None = None
    metrics: MetricsEndpoint | None = MetricsEndpoint()  # None: `metrics: false`
    # The driver's periodic chores' intervals the file sets, by MM2's names (`core.intervals`:
    # the names, topo's defaults for the rest).
    intervals: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Topology:
    file: str
    clusters: Mapping[str, Cluster]
    flows: tuple[Flow, ...]
    name: str = "topology"  # the owner recorded with everything topo creates
    engine: Engine = Engine()

    def edges(self) -> list[Edge]:
        return [edge for flow in self.flows for edge in flow.edges()]

    @property
    def home(self) -> str | None:
        """The cluster that holds the running replication's state (`engine.state_cluster`,
        else the first edge's target); None for a topology without flows."""
        if self.engine.state_cluster is not None:
            return self.engine.state_cluster
        edges = self.edges()
        return edges[0].target if edges else None

    def flow(self, index: int) -> Flow:
        """The flow at `index` in the file's flows list."""
        return self._flows_by_index[index]

    def edge(self, name: str) -> Edge:
        """The edge named `name` ("east->west")."""
        return self._edges_by_name[name]

    @cached_property
    def _edges_by_name(self) -> dict[str, Edge]:
        return {edge.name: edge for edge in self.edges()}

    @cached_property
    def _flows_by_index(self) -> dict[int, Flow]:
        # The graph rules look flows up once per chain they follow: a scan would be quadratic.
        return {flow.index: flow for flow in self.flows}
