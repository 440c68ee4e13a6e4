"""The driver's and `topo run`'s log lines: `topo: <message>` (text), or with
`--log-format json` one JSON object per line: time (ISO 8601, UTC), level, flow (or null),
event and message. Pure: the caller prints."""

import json
import time
from collections.abc import Iterable

FORMATS = ("text", "json")
ENVIRONMENT = "TOPO_LOG_FORMAT"  # `topo run --log-format` sets it for itself and its driver


def line(
    message: str,
    fmt: str,
    now: float,
    *,
    event: str,
    level: str = "info",
    flow: str | None = None,
    flows: Iterable[str] = (),
) -> str:
    """One log line. Without `flow`, a message that starts with a flow's name ("east->west:
    ...", "east->west failed: ...") is that flow's."""
    if fmt != "json":
        return f"topo: {message}"
    if flow is None:
        flow = next(
            (f for f in flows if message.startswith((f"{f}:", f"{f} "))),
            None,
        )
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
    return json.dumps(
        {"time": stamp, "level": level, "flow": flow, "event": event, "message": message}
    )
