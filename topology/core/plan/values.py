"""The Plan value: frozen, JSON-serialisable, fingerprinted; what apply executes and nothing else.

Renderers and apply read the dict form (`Plan.to_dict`), the same document `--format json`
prints and `-o PLAN.json` saves, so what a reviewer reads is exactly what runs.

Two digests travel with a plan. `observed_sha256` is the planner's record of what it read on
the clusters (`planner.Reads`): a saved plan is stale once that changes. `fingerprint` is a
SHA-256 over the whole document apply acts on (`FINGERPRINTED`, `observed_sha256` included),
so a saved plan edited by hand no longer matches its own fingerprint.
"""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# 2: `fingerprint` covers the whole plan; what the planner read is `observed_sha256`.
FORMAT_VERSION = "2"

# The keys of the plan document the fingerprint covers: everything that decides what apply
# does or what a reviewer reads. Left out: `topo_version` and `jobs` (informational, never
# read by apply) and the fingerprint itself.
FINGERPRINTED = (
    "format_version",
    "topology",
    "observed_sha256",
    "allow_delete",
    "clusters",
    "changes",
    "notes",
    "summary",
)


def fingerprint_of(document: Mapping[str, Any]) -> str:
    """`sha256:<hex>` over the canonical JSON (sorted keys, no spaces, ASCII) of the document's
    `FINGERPRINTED` keys. Works on a plan document as saved or as `Plan.to_dict` makes it.
    Raises ValueError for a value JSON cannot hold (NaN, infinity)."""
    content = {key: document[key] for key in FINGERPRINTED if key in document}
    text = json.dumps(
        content, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


class Action(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    REPLACE = "replace"


class Resource(StrEnum):
    TOPIC = "topic"
    TOPIC_CONFIG = "topic_config"
    PARTITIONS = "partitions"
    ACL = "acl"
    OWNERSHIP = "ownership"
    FLOW = "flow"  # a replication job: create starts it, update restarts it, delete stops it


# The order apply runs changes in, which is also the order a plan lists them: topo's state
# topic before any ownership record is written to it; topics before their partitions, configs
# and ACLs; jobs once their topics exist (a stopped flow's job before its topics go); every
# other delete last, so a failure part-way never leaves a copy without its topic.
PHASES: tuple[tuple[Action, Resource], ...] = (
    (Action.CREATE, Resource.TOPIC),
    (Action.CREATE, Resource.OWNERSHIP),
    (Action.UPDATE, Resource.OWNERSHIP),
    (Action.UPDATE, Resource.PARTITIONS),
    (Action.UPDATE, Resource.TOPIC_CONFIG),
    (Action.CREATE, Resource.ACL),
    (Action.DELETE, Resource.FLOW),
    (Action.CREATE, Resource.FLOW),
    (Action.UPDATE, Resource.FLOW),
    (Action.DELETE, Resource.ACL),
    (Action.DELETE, Resource.TOPIC),
    (Action.DELETE, Resource.OWNERSHIP),
)


class NoteLevel(StrEnum):
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Change:
    """One thing apply will do to one cluster.

    `before` / `after` hold the values that change (None for a create's before or a delete's
    after); a config whose value is None goes back to the cluster's default. `edges` are the
    replication edges ("east->west") the change serves.
    """

    action: Action
    resource: Resource
    cluster: str
    name: str
    reason: str
    before: Mapping[str, Any] | None = None
    after: Mapping[str, Any] | None = None
    edges: tuple[str, ...] = ()

    @property
    def phase(self) -> int:
        return PHASES.index((self.action, self.resource))

    @property
    def unattended(self) -> bool:
        """May a running replication job make this change on its own, without an apply? Only
        what follows the sources: creating and growing copies, syncing their configs and
        ACLs; never a delete, and never a job start or stop."""
        return self.action is not Action.DELETE and self.resource is not Resource.FLOW

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "action": str(self.action),
            "resource": str(self.resource),
            "cluster": self.cluster,
            "name": self.name,
        }
        if self.before is not None:
            data["before"] = dict(self.before)
        if self.after is not None:
            data["after"] = dict(self.after)
        data["reason"] = self.reason
        data["edges"] = list(self.edges)
        return data


@dataclass(frozen=True)
class Note:
    """Something a reviewer must know that is not a change: a topic kept, a value not synced."""

    level: NoteLevel
    cluster: str
    name: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {
            "level": str(self.level),
            "cluster": self.cluster,
            "name": self.name,
            "message": self.message,
        }


@dataclass(frozen=True)
class Plan:
    topology_file: str
    topology_sha256: str
    owner: str  # the topology's name, recorded with everything the plan creates
    observed_sha256: str  # `sha256:<hex>` of what the planner read on the clusters
    clusters: Mapping[str, str]  # name -> bootstrap, never credentials
    changes: tuple[Change, ...]
    notes: tuple[Note, ...] = ()
    allow_delete: bool = False
    topo_version: str = field(default="", compare=False)

    @property
    def empty(self) -> bool:
        return not self.changes

    def summary(self) -> dict[str, int]:
        counts = {str(action): 0 for action in Action}
        for change in self.changes:
            counts[str(change.action)] += 1
        return counts

    @property
    def fingerprint(self) -> str:
        """The SHA-256 of the whole plan (`fingerprint_of` its document)."""
        return fingerprint_of(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "topo_version": self.topo_version,
            "topology": {
                "file": self.topology_file,
                "sha256": self.topology_sha256,
                "name": self.owner,
            },
            "fingerprint": "",
            "observed_sha256": self.observed_sha256,
            "allow_delete": self.allow_delete,
            "clusters": {name: {"bootstrap": b} for name, b in sorted(self.clusters.items())},
            "changes": [change.to_dict() for change in self.changes],
            "notes": [note.to_dict() for note in self.notes],
            "summary": self.summary(),
        }
        data["fingerprint"] = fingerprint_of(data)
        return data


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    """A saved plan read back; the caller has checked it against schemas/plan.schema.json (and
    its fingerprint: `saved.read` does both)."""
    return Plan(
        topology_file=data["topology"]["file"],
        topology_sha256=data["topology"]["sha256"],
        owner=data["topology"]["name"],
        observed_sha256=data["observed_sha256"],
        clusters={name: c["bootstrap"] for name, c in data["clusters"].items()},
        changes=tuple(
            Change(
                action=Action(c["action"]),
                resource=Resource(c["resource"]),
                cluster=c["cluster"],
                name=c["name"],
                reason=c["reason"],
                before=c.get("before"),
                after=c.get("after"),
                edges=tuple(c.get("edges", ())),
            )
            for c in data["changes"]
        ),
        notes=tuple(
            Note(NoteLevel(n["level"]), n["cluster"], n["name"], n["message"])
            for n in data.get("notes", ())
        ),
        allow_delete=data.get("allow_delete", False),
        topo_version=data.get("topo_version", ""),
    )
