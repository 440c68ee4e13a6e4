"""Kafka client settings by role, MirrorMaker 2's vocabulary: what a cluster's `consumer:`,
`producer:` and `admin:` sections and a flow's `consumer:` and `producer:` set, which of them
topo keeps for itself, and how they are layered.

MM2 gives each client of a flow its settings from `<alias>.consumer.*` (the source's consumer),
`<alias>.producer.*` (the target's producer), `<alias>.admin.*`, and per flow from
`<source>-><target>.consumer.*` and `.producer.*`. topo reads the same roles, with Kafka's Java
client names (the copy slots are Java clients), over its own defaults and under what its
guarantees rest on: every copy acknowledged by all in-sync replicas and written idempotently,
only committed records read, positions committed by topo alone, and its own transactional ids
and client ids. An override of one of those is refused at validate time (T213), with its line.
"""

from collections.abc import Mapping
from typing import Any

from topology.core.connection import property_text as text
from topology.core.model import Cluster, FlowSettings

ROLES = ("consumer", "producer", "admin")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")  # Kafka's compression.type for a producer
FLOW_ROLES = ("consumer", "producer")

# The copy slots' producer, unless a setting says otherwise: a bulk copy sends fewer, larger
# requests, and linger bounds the wait for a quiet one.
PRODUCER_DEFAULTS = {"linger.ms": "5", "batch.size": "262144"}
# What the copy slots' producer always has (idempotence needs acks=all): no duplicates or
# reordering on a retry.
PRODUCER_FIXED = {"acks": "all", "enable.idempotence": "true"}

_ANY = None  # any value is refused: topo sets it itself
# Per role, each setting topo keeps: the values it accepts (None: none) and why.
_KEPT: dict[str, dict[str, tuple[frozenset[str] | None, str]]] = {
    "producer": {
        "acks": (frozenset({"all", "-1"}), "every copy is acknowledged by all in-sync replicas"),
        "enable.idempotence": (frozenset({"true"}), "a retried write is never copied twice"),
        "transactional.id": (_ANY, "each exactly-once copy slot has its own transactional id"),
        "max.in.flight.requests.per.connection": (
            frozenset({"1", "2", "3", "4", "5"}),
            "idempotence keeps order with at most 5 requests in flight",
        ),
        "key.serializer": (_ANY, "copies are written as the bytes they were read as"),
        "value.serializer": (_ANY, "copies are written as the bytes they were read as"),
        "partitioner.class": (_ANY, "each copy goes to its record's own partition"),
    },
    "consumer": {
        "isolation.level": (
            frozenset({"read_committed"}),
            "an aborted transaction's records are never copied",
        ),
        "enable.auto.commit": (frozenset({"false"}), "topo commits a position once it is copied"),
        "auto.offset.reset": (_ANY, "where a flow starts is its `start:` setting"),
        "group.id": (_ANY, "topo's copy slots are assigned their partitions, in no group"),
        "group.instance.id": (_ANY, "topo's copy slots are assigned their partitions"),
        "key.deserializer": (_ANY, "records are read as bytes"),
        "value.deserializer": (_ANY, "records are read as bytes"),
    },
    "admin": {},
}
# Every role: how a client reaches its cluster is the cluster's `bootstrap`, `security` and
# `client:`, and topo names its clients.
_KEPT_EVERYWHERE = ("bootstrap.servers", "client.id")
_CONNECTION_PREFIXES = ("security.protocol", "sasl.", "ssl.")


def refusal(role: str, key: str, value: str | int | float | bool) -> str | None:
    """Why `key: value` may not be set for `role` (None: it may)."""
    if key in _KEPT_EVERYWHERE:
        return f"topo sets {key} itself (the cluster's bootstrap, its own client names)"
    if key.startswith(_CONNECTION_PREFIXES):
        return f"how topo reaches a cluster is its `security:` and `client:`, not one role's {key}"
    given = text(value).strip().lower()
    if role == "producer" and key == "retries" and given == "0":
        return (
            "an idempotent producer must retry (retries above 0; it stops at delivery.timeout.ms)"
        )
    if role == "producer" and key == "compression.type" and text(value).strip() not in CODECS:
        return f"compression.type is one of {', '.join(CODECS)}, not {text(value)!r}"
    kept = _KEPT[role].get(key)
    if kept is None:
        return None
    allowed, why = kept
    if allowed is not None and given in allowed:
        return None
    must = "" if allowed is None else f" (only {' or '.join(sorted(allowed))})"
    return f"topo keeps {role} {key} itself{must}: {why}"


def layered(*sections: Mapping[str, Any]) -> dict[str, str]:
    """The sections' settings, later ones over earlier ones, as text."""
    found: dict[str, str] = {}
    for section in sections:
        found.update({key: text(value) for key, value in section.items()})
    return found


def producer(*sections: Mapping[str, Any]) -> dict[str, str]:
    """The copy slots' producer settings: topo's defaults, then `sections` (the target
    cluster's `producer:`, then the flow's), then what topo's guarantees need."""
    return {**PRODUCER_DEFAULTS, **layered(*sections), **PRODUCER_FIXED}


def of_edge(source: Cluster, target: Cluster, settings: FlowSettings) -> dict[str, dict[str, str]]:
    """A flow's copy clients by role: its consumer (the source cluster's `consumer:`, then the
    flow's), its producer (`producer` of the target's and the flow's) and its leader's admin
    client of the target (the target's `admin:`)."""
    return {
        "consumer": layered(source.roles.get("consumer", {}), settings.roles.get("consumer", {})),
        "producer": producer(target.roles.get("producer", {}), settings.roles.get("producer", {})),
        "admin": layered(target.roles.get("admin", {})),
    }
