"""Kafka's own rules that topo checks offline: topic names and bootstrap addresses."""

import re

MAX_TOPIC_NAME = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
# ASCII digits only (str.isdigit also takes fullwidth and Arabic-Indic digits), and few
# enough that int() never refuses them.
_PORT = re.compile(r"[0-9]{1,5}")
_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?)")


def topic_name_problem(name: str) -> str | None:
    """Why Kafka would refuse this topic name, or None."""
    if not name:  # `(?:)` is a literal pattern too
        return "a topic name cannot be empty"
    if name in (".", ".."):
        return f"'{name}' is not a legal topic name"
    if not _LEGAL_TOPIC.fullmatch(name):
        bad = sorted({c for c in name if not _LEGAL_TOPIC.fullmatch(c)})
        return (
            f"topic '{name}' has characters Kafka refuses: {' '.join(repr(c) for c in bad)} "
            "(allowed: letters, digits, '.', '_', '-')"
        )
    if len(name) > MAX_TOPIC_NAME:
        return f"topic '{name[:40]}...' is {len(name)} characters; Kafka allows {MAX_TOPIC_NAME}"
    return None


def metric_name(topic: str) -> str:
    """Kafka replaces '.' with '_' in metric names, so topics equal after this collide there."""
    return topic.replace(".", "_")


def is_internal_topic(name: str) -> bool:
    """MM2's ReplicationPolicy.isInternalTopic: never replicated, whatever the filter says."""
    return name.startswith(("__", ".")) or name.endswith((".internal", "-internal"))


def bootstrap_problem(bootstrap: str) -> str | None:
    """Why a comma-separated host:port list is malformed, or None."""
    for address in (part.strip() for part in bootstrap.split(",")):
        if not address:
            return "an empty address in the list (a stray comma?)"
        if "://" in address:
            return f"'{address}' has a scheme; write host:port (the protocol is security.protocol)"
        host, colon, port = address.rpartition(":")
        if not colon or not host or address.endswith("]"):  # `[::1]` has colons, but no port
            return f"'{address}' needs a port, as host:port"
        if not _HOST.fullmatch(host):
            return f"'{address}' has an invalid host '{host}'"
        if not _PORT.fullmatch(port) or not 0 < int(port) < 65536:
            return f"'{address}' has an invalid port '{port}' (1-65535)"
    return None


# MM2's DefaultConfigPropertyFilter: topic configs never copied to a remote topic, because they
# describe the source cluster's brokers or clocks rather than the data. Full-match regexes.
CONFIG_EXCLUDES = (
    r"follower\.replication\.throttled\.replicas",
    r"leader\.replication\.throttled\.replicas",
    r"message\.timestamp\.difference\.max\.ms",
    r"message\.timestamp\.type",
    r"unclean\.leader\.election\.enable",
    r"min\.insync\.replicas",
)
