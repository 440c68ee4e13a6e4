"""Replication job specs: what one edge's Spark job does, as a plain serialisable value.

A spec holds rules, not topic lists: which source topics the edge admits, how they are named
on the target, which records are dropped (the loop rules and the user's filter), and how they
are delivered. The running job applies the rules to the topics it finds, so a topic created
on the source after apply is picked up without another apply. The spec's digest is what a
plan compares with the running job's to decide whether to (re)start it.

Provenance: every copied record carries a `topo-provenance` header, the comma-separated
clusters the record has been on, origin first (a record produced on east and copied to west
carries `east`; copied on from west to central, `east,west`). A record is never copied to a
cluster named in it, so identity-named active-active and aggregation topologies cannot loop.

Source offsets: with provenance on, every copy also carries a `topo-offsets` header, the
`cluster:offset` pairs of the record on each cluster it was copied from, in hop order (a record
at offset 41 on east, copied to west at 17 and on to central, carries `east:41,west:17` there).
The partition number never changes along the way. This is what makes consumer offset
translation exact (docs/offsets.md).
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from topology.core import model_data, naming
from topology.core.errors import TopoError
from topology.core.model import Edge, FlowKind, Naming, Topology

PROVENANCE_HEADER = "topo-provenance"
OFFSETS_HEADER = "topo-offsets"


@dataclass(frozen=True)
class JobSpec:
    flow: str  # the edge, "east->west"
    source: str
    target: str
    topics: dict[str, list[str]]  # include / exclude, full-match regexes
    naming: str
    separator: str
    heartbeats: bool
    provenance: bool
    delivery: str  # at-least-once | exactly-once
    start: str  # earliest | latest | mm2: where a topic seen for the first time starts
    record_filter: str | None  # a Spark SQL predicate over the source record's columns
    # A record whose last hop was one of these clusters is not forwarded: in an identity-named
    # active-active mesh every member already gets each record directly from its origin.
    no_forward_from: tuple[str, ...] = ()
    on_loss: str = "alert"  # alert | stop: records the source lost before they were copied
    tasks: int | None = None  # copy slots; None: sized as the flow starts (`copy_slots`)
    paused: bool = False  # copies nothing; its committed positions wait (`topo reset` moves them)

    def to_dict(self) -> dict[str, Any]:
        found = {
            "flow": self.flow,
            "source": self.source,
            "target": self.target,
            "topics": self.topics,
            "naming": self.naming,
            "separator": self.separator,
            "heartbeats": self.heartbeats,
            "provenance": self.provenance,
            "delivery": self.delivery,
            "start": self.start,
            "record_filter": self.record_filter,
            "no_forward_from": list(self.no_forward_from),
        }
        if self.on_loss != "alert":  # the default is left out: specs made before it are equal
            found["on_loss"] = self.on_loss
        if self.tasks is not None:
            found["tasks"] = self.tasks
        if self.paused:  # only when paused: the spec of a flow never paused keeps its digest
            found["paused"] = True
        return found

    @property
    def digest(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    @property
    def slug(self) -> str:
        """A file-name-safe name for the edge: its checkpoint folder."""
        return naming.flow_slug(self.source, self.target)


def spec_of(topology: Topology, edge: Edge) -> JobSpec:
    settings = edge.settings
    flow = topology.flow(edge.flow)
    mesh = flow.kind is FlowKind.ACTIVE_ACTIVE and settings.naming is Naming.IDENTITY
    return JobSpec(
        flow=edge.name,
        source=edge.source,
        target=edge.target,
        topics=settings.topics.to_dict(),
        naming=str(settings.naming),
        separator=settings.separator,
        heartbeats=settings.emit.heartbeats,
        provenance=settings.provenance,
        delivery=settings.delivery,
        start=settings.start,
        record_filter=settings.filter,
        no_forward_from=tuple(c for c in flow.sources if c != edge.source) if mesh else (),
        on_loss=settings.on_loss,
        tasks=settings.tasks,
        paused=settings.paused,
    )


def specs_of(topology: Topology) -> list[JobSpec]:
    """One spec per edge, in the topology's order."""
    return [spec_of(topology, edge) for edge in topology.edges()]


def spec_from_dict(data: Mapping[str, Any]) -> JobSpec:
    return JobSpec(
        flow=data["flow"],
        source=data["source"],
        target=data["target"],
        topics={k: list(v) for k, v in data["topics"].items()},
        naming=data["naming"],
        separator=data["separator"],
        heartbeats=data["heartbeats"],
        provenance=data["provenance"],
        delivery=data["delivery"],
        start=data["start"],
        record_filter=data["record_filter"],
        no_forward_from=tuple(data.get("no_forward_from", ())),
        on_loss=str(data.get("on_loss", "alert")),
        tasks=None if data.get("tasks") is None else int(data["tasks"]),
        paused=bool(data.get("paused", False)),
    )


# The jobs document: everything the driver runs, as `topo apply` publishes it to
# topo-runs.internal on the home cluster (and `topo run` writes it to the driver's folder): the
# specs, the resolved topology they were made from (the engine settings, the clusters' connection
# settings with secrets as references, the flows' settings) and the start positions of flows
# taking over from MM2. The driver runs this document and never reads the topology file: what it
# checks is the document's own format and digest. Another format is refused.
JOBS_FORMAT = "2"
# The parts of a flow's settings a running driver uses beyond its spec (follow the sources, sync
# configs and ACLs, translate group offsets, hand over from MM2): a change of any restarts it.
DRIVER_SETTINGS = (
    "groups",
    "replication_factor",
    "sync",
    "emit",
    "config_exclude",
    "mm2",
    "internal_separator",
    "objectives",  # only where a flow declares any (model_data.settings_data)
    "roles",  # the flow's client settings by role, only where it sets any
)


class JobsFormatError(TopoError):
    """A jobs document this topo cannot run: another format version, or not a jobs document."""


@dataclass(frozen=True)
class JobsDocument:
    owner: str
    published_at: float
    topology_data: Mapping[str, Any]  # model_data.to_data of the topology, its used clusters
    specs: tuple[JobSpec, ...]
    # Flows that take over from MM2 (`start: mm2`), as their plan said: topic -> partition ->
    # the offset each starts at. Read by a copy started without positions of its own only.
    starts: Mapping[str, Mapping[str, Mapping[int, int]]] = field(default_factory=dict)

    def content(self) -> dict[str, Any]:
        """What the driver runs: everything but when it was published."""
        found: dict[str, Any] = {
            "format": JOBS_FORMAT,
            "owner": self.owner,
            "topology": self.topology_data,
            "specs": [spec.to_dict() for spec in self.specs],
        }
        if self.starts:
            found["starts"] = {
                flow: {t: {str(p): o for p, o in sorted(at.items())} for t, at in by.items()}
                for flow, by in sorted(self.starts.items())
            }
        return found

    @property
    def digest(self) -> str:
        """The content's SHA-256: the same jobs published again have the same digest."""
        text = json.dumps(self.content(), sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {**self.content(), "published_at": self.published_at, "digest": self.digest}

    def topology(self, file: str = "(jobs document)") -> Topology:
        """The topology the specs were made from; `file` stands for where relative `${file:...}`
        references are read from."""
        return model_data.from_data(self.topology_data, file)

    def views(self) -> dict[str, dict[str, Any]]:
        """Each job as `topo plan` compares it (`job_views`)."""
        return job_views(self.topology(), self.specs)


def used_clusters(topology: Topology) -> set[str]:
    """The clusters a driver of this topology talks to: every edge's ends and the home."""
    used = {end for edge in topology.edges() for end in (edge.source, edge.target)}
    return used | ({topology.home} if topology.home is not None else set())


def job_views(
    topology: Topology, specs: Sequence[JobSpec] | None = None
) -> dict[str, dict[str, Any]]:
    """Per flow, everything its job runs with, as plain data: the spec, the flow's settings the
    driver uses beyond it, the engine, and how it reaches its clusters (source, target, home;
    secrets as references). `topo plan` compares these with the running jobs': any difference
    restarts the driver, and an edit that changes none of them (a comment) changes nothing."""
    engine = model_data.engine_data(topology.engine)
    found = {}
    for spec in specs if specs is not None else specs_of(topology):
        settings = model_data.settings_data(topology.edge(spec.flow).settings)
        ends = {spec.source, spec.target} | ({topology.home} if topology.home else set())
        found[spec.flow] = {
            **spec.to_dict(),
            **{key: settings[key] for key in DRIVER_SETTINGS if key in settings},
            "engine": engine,
            "clusters": {
                name: model_data.cluster_data(topology.clusters[name], masked=True)
                for name in sorted(ends)
            },
        }
    return found


def document(
    topology: Topology,
    now: float,
    starts: Mapping[str, Mapping[str, Mapping[int, int]]] | None = None,
) -> JobsDocument:
    """The jobs document of `topology` (LiteralSecretError when a cluster it uses has a secret
    written in the file: the document never holds one)."""
    data = model_data.to_data(topology, used_clusters(topology))
    return JobsDocument(topology.name, now, data, tuple(specs_of(topology)), dict(starts or {}))


def carry_starts(jobs: JobsDocument, previous: Any) -> JobsDocument:
    """`jobs` with the start positions the previous jobs document gave flows that take over
    from MM2 and that `jobs` has none for: a flow published again before its first copy (still
    waiting for topics, say) must still start where MM2 stopped, not at the earliest offset. A
    previous document that cannot be read gives nothing."""
    try:
        before = read_document(previous).starts if previous is not None else {}
    except JobsFormatError:
        return jobs
    kept = {
        spec.flow: before[spec.flow]
        for spec in jobs.specs
        if spec.start == "mm2" and spec.flow not in jobs.starts and spec.flow in before
    }
    if not kept:
        return jobs
    return replace(jobs, starts={**jobs.starts, **kept})


def read_document(data: Any) -> JobsDocument:
    """A jobs document read back and checked: this format, its digest matching its content,
    its specs the ones its topology makes. JobsFormatError otherwise."""
    if not isinstance(data, Mapping):
        raise JobsFormatError("not a jobs document (expected a JSON object)")
    found = data.get("format")
    if found != JOBS_FORMAT:
        raise JobsFormatError(
            f"jobs document format {found!r} is not {JOBS_FORMAT!r}, the one this topo runs; "
            "run the same topo version as the one that published it (`topo apply`)"
        )
    try:
        jobs = JobsDocument(
            owner=str(data["owner"]),
            published_at=float(data["published_at"]),
            topology_data=dict(data["topology"]),
            specs=tuple(spec_from_dict(spec) for spec in data["specs"]),
            starts={
                str(flow): {
                    str(topic): {int(p): int(o) for p, o in at.items()} for topic, at in by.items()
                }
                for flow, by in data.get("starts", {}).items()
            },
        )
        made = specs_of(jobs.topology())
    except (KeyError, TypeError, ValueError, AttributeError) as problem:
        raise JobsFormatError(
            f"malformed jobs document ({type(problem).__name__}: {problem})"
        ) from None
    if data.get("digest") != jobs.digest:
        raise JobsFormatError(
            "the jobs document's digest does not match its content (changed after it was "
            "published); run `topo apply` again"
        )
    if [spec.digest for spec in jobs.specs] != [spec.digest for spec in made]:
        raise JobsFormatError(
            "the jobs document holds specs that are not the ones its topology makes; run "
            "`topo apply` again"
        )
    return jobs


def visited(provenance: str | None) -> list[str]:
    """The clusters a `topo-provenance` header value names, origin first."""
    return [name for name in (provenance or "").split(",") if name]


def forwards(spec: JobSpec, provenance: str | None) -> bool:
    """Does the job copy a record with this provenance? (The copy loop's `Hops` applies the
    same rule; this is its reference, used by tests and `topo plan --show-jobs`.)"""
    clusters = visited(provenance)
    if spec.target in clusters:
        return False
    return not (clusters and clusters[-1] in spec.no_forward_from)


def stamped(spec: JobSpec, provenance: str | None) -> str:
    """The provenance header a copied record carries on the target."""
    return ",".join([*visited(provenance), spec.source])


def hop_offsets(value: str | bytes | None) -> dict[str, int]:
    """The offsets a `topo-offsets` header value gives, by cluster ({} when absent or bad)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    found: dict[str, int] = {}
    for pair in (value or "").split(","):
        cluster, _, offset = pair.rpartition(":")
        if cluster and offset.isascii() and offset.isdigit():
            found[cluster] = int(offset)
    return found


def stamped_offsets(value: str | None, source: str, offset: int) -> str:
    """The `topo-offsets` header a copied record carries: the source's pair appended."""
    return ",".join(x for x in ((value or ""), f"{source}:{offset}") if x)


Header = tuple[str, bytes | None]


def copied_headers(spec: JobSpec, headers: Sequence[Header], offset: int) -> tuple[Header, ...]:
    """The headers the copy of a record (at `offset` on the source, with these headers) carries
    on the target: the record's own, in order, then topo's stamps when provenance is on. The
    copy loop's `Hops` does the same; this is its reference, for tests and the demo's check."""
    if not spec.provenance:
        return tuple(headers)
    ours = (PROVENANCE_HEADER, OFFSETS_HEADER)
    theirs = tuple(h for h in headers if h[0] not in ours)
    provenance = next((v for k, v in reversed(headers) if k == PROVENANCE_HEADER), None)
    hops = next((v for k, v in reversed(headers) if k == OFFSETS_HEADER), None)

    def text(value: bytes | None) -> str | None:
        return None if value is None else value.decode("utf-8", "replace")

    return (
        *theirs,
        (PROVENANCE_HEADER, stamped(spec, text(provenance)).encode()),
        (OFFSETS_HEADER, stamped_offsets(text(hops), spec.source, offset).encode()),
    )
