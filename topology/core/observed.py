"""What topo saw on a live cluster: plain frozen values, no client objects.

The Kafka adapter (`topology.kafka.inventory`) builds these; the planner reads them. They
round-trip through JSON (`to_dict` / `cluster_from_dict`), so plans can be computed and tested
from recorded observations without a broker.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    replication_factor: int
    # Only configs set on the topic itself (DYNAMIC_TOPIC_CONFIG): broker and built-in defaults
    # are left out, so a cluster's defaults never show up as a difference.
    configs: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "partitions": self.partitions,
            "replication_factor": self.replication_factor,
            "configs": dict(sorted(self.configs.items())),
        }


@dataclass(frozen=True, order=True)
class Acl:
    """One ACL binding, in Kafka's own words (resource and pattern types, operation names)."""

    resource_type: str  # TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID
    resource_name: str
    pattern_type: str  # LITERAL, PREFIXED
    principal: str  # User:alice
    host: str  # * for any
    operation: str  # READ, WRITE, ALL, DESCRIBE, ...
    permission: str  # ALLOW, DENY

    def to_dict(self) -> dict[str, str]:
        return {
            "resource_type": self.resource_type,
            "resource_name": self.resource_name,
            "pattern_type": self.pattern_type,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation,
            "permission": self.permission,
        }

    def describe(self) -> str:
        """One line for people: ALLOW User:alice READ on TOPIC east.orders from *."""
        return (
            f"{self.permission} {self.principal} {self.operation} on {self.resource_type} "
            f"{self.resource_name} ({self.pattern_type.lower()}) from {self.host}"
        )


@dataclass(frozen=True)
class Group:
    """A consumer group and its committed offsets, keyed by (topic, partition)."""

    group_id: str
    state: str  # STABLE, EMPTY, ... as the broker reports it
    offsets: Mapping[tuple[str, int], int] = field(default_factory=dict)


@dataclass(frozen=True)
class Owned:
    """One ownership record from the state topic: topo made this resource for these edges."""

    kind: str  # "topic" or "acl"
    name: str  # the topic name, or the ACL's key (see `acl_key`)
    edges: tuple[str, ...]  # "east->west", sorted
    acl: Acl | None = None  # the binding, for kind "acl"
    owner: str = ""  # the name of the topology that made it (Topology.name)

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "name": self.name,
            "owner": self.owner,
            "edges": list(self.edges),
        }
        if self.acl is not None:
            data["acl"] = self.acl.to_dict()
        return data


def acl_key(acl: Acl) -> str:
    """A stable name for an ACL binding, used as its ownership record's key."""
    return "|".join(acl.to_dict().values())


def owned_from_dict(data: Mapping[str, Any]) -> Owned:
    acl = data.get("acl")
    return Owned(
        kind=data["kind"],
        name=data["name"],
        edges=tuple(data["edges"]),
        acl=Acl(**acl) if acl else None,
        owner=data.get("owner", ""),
    )


@dataclass(frozen=True)
class Cluster:
    """One cluster as observed. `acls` is None when the cluster has no authorizer."""

    name: str
    brokers: int
    default_replication_factor: int | None
    topics: Mapping[str, Topic]
    acls: tuple[Acl, ...] | None
    groups: Mapping[str, Group] = field(default_factory=dict)
    owned: Mapping[str, Owned] = field(default_factory=dict)  # by Owned.key

    def owns_topic(self, name: str) -> Owned | None:
        return self.owned.get(f"topic:{name}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "brokers": self.brokers,
            "default_replication_factor": self.default_replication_factor,
            "topics": {name: topic.to_dict() for name, topic in sorted(self.topics.items())},
            "acls": None if self.acls is None else [acl.to_dict() for acl in sorted(self.acls)],
            "groups": {
                group_id: {
                    "state": group.state,
                    "offsets": [
                        {"topic": topic, "partition": partition, "offset": offset}
                        for (topic, partition), offset in sorted(group.offsets.items())
                    ],
                }
                for group_id, group in sorted(self.groups.items())
            },
            "owned": [owned.to_dict() for _key, owned in sorted(self.owned.items())],
        }


def cluster_from_dict(data: Mapping[str, Any]) -> Cluster:
    """The inverse of `Cluster.to_dict`: recorded observations for tests and benchmarks."""
    acls = data.get("acls")
    owned = [owned_from_dict(item) for item in data.get("owned", [])]
    return Cluster(
        name=data["name"],
        brokers=data["brokers"],
        default_replication_factor=data.get("default_replication_factor"),
        topics={
            name: Topic(name, topic["partitions"], topic["replication_factor"], topic["configs"])
            for name, topic in data["topics"].items()
        },
        acls=None if acls is None else tuple(Acl(**acl) for acl in acls),
        groups={
            group_id: Group(
                group_id,
                group["state"],
                {(o["topic"], o["partition"]): o["offset"] for o in group["offsets"]},
            )
            for group_id, group in data.get("groups", {}).items()
        },
        owned={item.key: item for item in owned},
    )
