"""MM2's client properties by role, read into topo's `consumer:`, `producer:` and `admin:`.

A cluster's `<alias>.consumer.X`, `.producer.X` and `.admin.X` set that cluster's role sections;
a flow's `<source>-><target>.consumer.X` (or `.source.consumer.X`, MM2's name for the same
consumer) and `.producer.X` (or `.target.producer.X`) set the flow's own. What a flow's clients
of the other side, or its admin clients, are given has no place in topo (its flows' admin
settings are its clusters'), and a setting topo keeps for itself (`client_roles.refusal`) is
not imported either: both are warned about (M009), never dropped silently.
"""

from topology.core import client_roles

# MM2's names for a flow's clients -> topo's role, per flow, the longest prefix first. The
# producer writing the copies is Connect's, which takes a flow's `producer.override.*` (MM2's
# override policy is All); a flow's `producer.*` and `target.producer.*` reach only MM2's
# offset-syncs producer (MirrorConnectorConfig), though whoever wrote them meant the copies.
_FLOW_NAMES = {
    "producer.override.": "producer",
    "source.consumer.": "consumer",
    "target.producer.": "producer",
    "consumer.": "consumer",
    "producer.": "producer",
}
# A flow's names MM2 gives a weaker or another client than topo gives the role.
MISREAD = ("producer.", "target.producer.")  # MM2: the offset-syncs producer only
UNDER_CLUSTER = "consumer."  # MM2: the source cluster's `<alias>.consumer.X` wins over it
_CLUSTER_NAMES = {"consumer.": "consumer", "producer.": "producer", "admin.": "admin"}


def prefix_of(name: str) -> str | None:
    """The MM2 prefix of a flow's client setting `name` (None: not one)."""
    for prefix in _FLOW_NAMES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return prefix
    return None


def role_of(name: str, flow: bool) -> tuple[str, str] | None:
    """The role and the client setting `name` (an MM2 property without its `<alias>.` or
    `<source>-><target>.` prefix) gives topo, or None when topo has no such role there."""
    for prefix, role in (_FLOW_NAMES if flow else _CLUSTER_NAMES).items():
        if name.startswith(prefix) and len(name) > len(prefix):
            return role, name[len(prefix) :]
    return None


def not_kept(role: str, key: str, value: str) -> str | None:
    """Why the setting is not imported (topo keeps it for itself), or None."""
    return client_roles.refusal(role, key, value)
