"""MirrorMaker 2's property names, their defaults and their topo equivalents, in one place.

Sources: apache/kafka `connect/mirror` (MirrorMakerConfig, MirrorSourceConfig,
MirrorCheckpointConfig, DefaultTopicFilter, DefaultGroupFilter, DefaultConfigPropertyFilter,
MirrorClientConfig) and `clients` (ConfigTransformer, EnvVarConfigProvider,
DirectoryConfigProvider). docs/mm2.md explains each mapping to users.
"""

import re
from typing import Any

from topology.core import kafka_rules

# A topo flow setting, flattened: ("sync", "configs") is `sync: {configs: ...}`.
SettingPath = tuple[str, ...]

# -- replication policies and plug-ins ------------------------------------------------------

POLICY_PACKAGE = "org.apache.kafka.connect.mirror."
DEFAULT_POLICY = POLICY_PACKAGE + "DefaultReplicationPolicy"
IDENTITY_POLICY = POLICY_PACKAGE + "IdentityReplicationPolicy"
POLICY_NAMING = {
    DEFAULT_POLICY: "prefix",
    "DefaultReplicationPolicy": "prefix",
    IDENTITY_POLICY: "identity",
    "IdentityReplicationPolicy": "identity",
}
# Plug-in classes whose default topo implements; any other class changes what is copied.
DEFAULT_PLUGINS = {
    "topic.filter.class": POLICY_PACKAGE + "DefaultTopicFilter",
    "group.filter.class": POLICY_PACKAGE + "DefaultGroupFilter",
    "config.property.filter.class": POLICY_PACKAGE + "DefaultConfigPropertyFilter",
}

# -- config providers -------------------------------------------------------------------------

PROVIDER_PACKAGE = "org.apache.kafka.common.config.provider."
ENV_PROVIDER = PROVIDER_PACKAGE + "EnvVarConfigProvider"
DIRECTORY_PROVIDER = PROVIDER_PACKAGE + "DirectoryConfigProvider"
FILE_PROVIDER = PROVIDER_PACKAGE + "FileConfigProvider"

# -- connector settings topo maps -------------------------------------------------------------

# MM2 names -> topo setting paths. Lists are comma-separated regexes in MM2, YAML lists in topo.
LIST_SETTINGS: dict[str, SettingPath] = {
    "topics": ("topics", "include"),
    "topics.exclude": ("topics", "exclude"),
    "groups": ("groups", "include"),
    "groups.exclude": ("groups", "exclude"),
    "config.properties.exclude": ("configs", "exclude"),
}
# Names Kafka 3.x still read (KIP-629) and Kafka 4.0 removed (KAFKA-17529): old -> new.
OLD_NAMES = {
    "topics.blacklist": "topics.exclude",
    "groups.blacklist": "groups.exclude",
    "config.properties.blacklist": "config.properties.exclude",
}
BOOLEAN_SETTINGS: dict[str, SettingPath] = {
    "sync.topic.configs.enabled": ("sync", "configs"),
    "sync.topic.acls.enabled": ("sync", "acls"),
    "sync.group.offsets.enabled": ("sync", "group_offsets"),
    "refresh.topics.enabled": ("sync", "partitions"),
    "emit.heartbeats.enabled": ("emit", "heartbeats"),
    "emit.checkpoints.enabled": ("emit", "checkpoints"),
    # DefaultReplicationPolicy's: its internal topics' names (checkpoints) joined by the
    # separator, or by `.` when false
    "replication.policy.internal.topic.separator.enabled": ("internal_separator",),
}
REPLICATION_FACTOR = "replication.factor"
POLICY_CLASS = "replication.policy.class"
SEPARATOR = "replication.policy.separator"
MAPPED_SETTINGS = frozenset(
    {*LIST_SETTINGS, *OLD_NAMES, *BOOLEAN_SETTINGS, REPLICATION_FACTOR, POLICY_CLASS, SEPARATOR}
)

# DefaultConfigPropertyFilter's list. MM2's config.properties.exclude replaces it; topo's
# configs.exclude adds to it, so an import keeps only the extra entries.
DEFAULT_CONFIG_EXCLUDES = kafka_rules.CONFIG_EXCLUDES

# -- defaults ---------------------------------------------------------------------------------

# Every topo flow setting an import decides, in the order of docs/topology.md's flow-settings table.
SETTING_PATHS: tuple[SettingPath, ...] = (
    ("topics", "include"),
    ("topics", "exclude"),
    ("groups", "include"),
    ("groups", "exclude"),
    ("naming",),
    ("separator",),
    ("internal_separator",),
    ("replication_factor",),
    ("sync", "configs"),
    ("sync", "partitions"),
    ("sync", "acls"),
    ("sync", "group_offsets"),
    ("emit", "heartbeats"),
    ("emit", "checkpoints"),
    ("configs", "exclude"),
    ("delivery",),
    ("start",),
)

# topo's built-in defaults (topology.core.resolve and topology.core.model), flattened.
TOPO_DEFAULTS: dict[SettingPath, Any] = {
    ("topics", "include"): (".*",),
    ("topics", "exclude"): (r".*[-.]internal", r".*\.replica", "__.*"),
    ("groups", "include"): (".*",),
    ("groups", "exclude"): ("console-consumer-.*", "connect-.*", "__.*"),
    ("naming",): "prefix",
    ("separator",): ".",
    ("internal_separator",): True,
    ("replication_factor",): None,
    ("sync", "configs"): True,
    ("sync", "partitions"): True,
    ("sync", "acls"): True,
    ("sync", "group_offsets"): True,
    ("emit", "heartbeats"): True,
    ("emit", "checkpoints"): True,
    ("configs", "exclude"): (),
    ("delivery",): "at-least-once",
    ("start",): "earliest",
}

# Where MM2's defaults differ from topo's; an import writes these explicitly.
MM2_DEFAULTS: dict[SettingPath, Any] = {
    **TOPO_DEFAULTS,
    ("replication_factor",): 2,
    ("sync", "group_offsets"): False,
}

# -- properties topo knows but does not map --------------------------------------------------

# Connector settings with no topo equivalent: topo decides these itself (intervals, tasks,
# internal topics) or has no such concept.
UNMAPPED_SETTINGS = frozenset(
    {
        "tasks.max",
        "offset.lag.max",
        "refresh.groups.enabled",
        "emit.offset-syncs.enabled",
        "offset-syncs.topic.location",
        "heartbeats.replication.enabled",
        "consumer.poll.timeout.ms",
        "admin.timeout.ms",
        "use.incremental.alter.configs",
        "add.source.alias.to.metrics",
        "forwarding.admin.class",
        "metric.reporters",
        "source.cluster.alias",
        "target.cluster.alias",
        *DEFAULT_PLUGINS,
    }
)
# Every `*.interval.seconds` and every internal topic's replication factor.
UNMAPPED_PATTERN = re.compile(r".*\.interval\.seconds|.+\.replication\.factor")

# Top-level names MM2 hands to its Connect workers (MirrorMakerConfig.workerConfig) or reads
# itself; none of them has a topo equivalent.
WORKER_PREFIXES = (
    "offset.storage",
    "config.storage",
    "status.storage",
    "key.converter",
    "value.converter",
    "header.converter",
    "task",
    "worker",
    "dedicated.mode.",
    "listeners",
    "rest.",
    "admin.listeners",
    "plugin.path",
    "plugin.discovery",
    "offset.flush.",
    "group.id",
    "client.id",
)

# MirrorClientConfig.CLIENT_CONFIG_DEF: top-level ones apply to every cluster that does not set
# its own (MirrorMakerConfig.clusterProps uses putIfAbsent).
CLIENT_DEFAULT_PATTERN = re.compile(r"bootstrap\.servers|security\.protocol|ssl\..+|sasl\..+")

# MM2 flows read `<source>.consumer.*` and `<src>-><tgt>.[source.]consumer.*`.
CLIENT_ROLE_PATTERN = re.compile(r"(source\.|target\.)?(consumer|producer|admin)\..+")

FLOW_KEY = re.compile(r"(?P<source>[^.]+?)->(?P<target>[^.]+)\.(?P<name>.+)")


def is_unmapped_setting(name: str) -> bool:
    return name in UNMAPPED_SETTINGS or UNMAPPED_PATTERN.fullmatch(name) is not None


def is_worker_setting(name: str) -> bool:
    return name.startswith(WORKER_PREFIXES)


def is_connector_setting(name: str) -> bool:
    return name in MAPPED_SETTINGS or name == "enabled" or is_unmapped_setting(name)
