"""A cluster's `admin:` settings for topo's own admin plane.

`admin:` uses the names of Kafka's Java admin client (MM2's `<alias>.admin.*`), which the copy
slots' leader uses as given. topo's admin plane (plan, apply, the driver's looks at topics,
configs, offsets and ACLs) is librdkafka's admin client, which spells some of them differently,
takes narrower ranges, and refuses a name it does not know when the client is made. Here each
setting with a librdkafka equivalent is translated and held to librdkafka's range; one without
an equivalent is left to the Java client. What was held or left out is said, so validate can
warn at the key (T214).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Whole:
    """A whole-number setting: librdkafka's name and range."""

    name: str
    low: int
    high: int


# Java admin client name -> librdkafka's. request.timeout.ms is librdkafka's default request
# timeout for admin calls (socket.timeout.ms); topo's own deadlines (`--timeout`) still bound
# each call. A socket buffer of -1 (the system's size) is librdkafka's 0.
WHOLE = {
    "request.timeout.ms": Whole("socket.timeout.ms", 10, 300_000),
    "retry.backoff.ms": Whole("retry.backoff.ms", 1, 300_000),
    "retry.backoff.max.ms": Whole("retry.backoff.max.ms", 1, 300_000),
    "reconnect.backoff.ms": Whole("reconnect.backoff.ms", 0, 3_600_000),
    "reconnect.backoff.max.ms": Whole("reconnect.backoff.max.ms", 0, 3_600_000),
    "connections.max.idle.ms": Whole("connections.max.idle.ms", 0, 2_147_483_647),
    "metadata.max.age.ms": Whole("metadata.max.age.ms", 1, 86_400_000),
    "socket.connection.setup.timeout.ms": Whole(
        "socket.connection.setup.timeout.ms", 1_000, 2_147_483_647
    ),
    "receive.buffer.bytes": Whole("socket.receive.buffer.bytes", 0, 100_000_000),
    "send.buffer.bytes": Whole("socket.send.buffer.bytes", 0, 100_000_000),
}
_SYSTEM_SIZE = {"receive.buffer.bytes", "send.buffer.bytes"}  # -1: the operating system's
# Settings both clients spell and read alike, with the values both take.
CHOICES = {"client.dns.lookup": ("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only")}
# librdkafka refuses to make a client whose reconnect.backoff.max.ms (by default 10 s) is below
# its reconnect.backoff.ms (by default 100 ms): the maximum is raised to the backoff.
_RECONNECT_DEFAULT = 100
_RECONNECT_MAX_DEFAULT = 10_000


@dataclass(frozen=True)
class AdminPlane:
    """What the admin plane uses (librdkafka's names and values, as text) and, per Java name
    given, why it uses something else than given (held to a range, or left out)."""

    settings: dict[str, str]
    notes: dict[str, str]


def translate(given: Mapping[str, Any]) -> AdminPlane:
    """`admin:` as librdkafka admin client settings."""
    settings: dict[str, str] = {}
    notes: dict[str, str] = {}
    for key, value in given.items():
        if key in CHOICES:
            choices = CHOICES[key]
            if str(value) in choices:
                settings[key] = str(value)
            else:
                notes[key] = f"topo's admin plane takes {' or '.join(choices)}: it leaves it unset"
            continue
        whole = WHOLE.get(key)
        if whole is None:
            notes[key] = (
                "topo's admin plane (librdkafka) has no such setting: "
                "the copy's Java admin client alone uses it"
            )
            continue
        number = _whole(value)
        if number is None:
            notes[key] = "not a whole number: topo's admin plane leaves it unset"
            continue
        if number == -1 and key in _SYSTEM_SIZE:
            number = 0
        held = min(max(number, whole.low), whole.high)
        if held != number:
            notes[key] = (
                f"topo's admin plane (librdkafka {whole.name}) takes "
                f"{whole.low}..{whole.high}: it uses {held}"
            )
        settings[whole.name] = str(held)
    backoff = settings.get("reconnect.backoff.ms")
    ceiling = settings.get("reconnect.backoff.max.ms")
    if backoff is not None or ceiling is not None:
        floor = int(backoff or _RECONNECT_DEFAULT)
        top = int(ceiling or _RECONNECT_MAX_DEFAULT)
        settings["reconnect.backoff.max.ms"] = str(max(top, floor))
    return AdminPlane(settings, notes)


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    return int(text) if text.lstrip("-").isdigit() else None
