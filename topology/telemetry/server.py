"""The running driver's HTTP endpoint, on a thread of its own: /metrics (Prometheus' text
format), /healthz (the process answers), /readyz (every flow runs and keeps up: 200, else 503)
and /history (the bounded history `topo dashboard` charts; `?seconds=N` or `?since=&until=`)."""

import contextlib
import json
import math
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from topology.telemetry.collector import FiguresCollector
from topology.telemetry.figures import Figures
from topology.telemetry.health import readiness

DEFAULT_RANGE = 900.0  # seconds of history when the request names none
MAX_RANGE = 86_400.0
# How often the serving thread looks whether it should stop, while no request comes (a stop
# wakes it at once, see Endpoint.stop): Python's default, 0.5 s, was a twentieth of an idle
# driver's Python time.
SERVE_POLL = 5.0


class Endpoint:
    """Serves one driver's figures; `history` gives the history document of a range."""

    def __init__(
        self,
        figures: Figures,
        history: Callable[[float, float], dict[str, Any]],
        ready_lag: int,
    ) -> None:
        self.figures = figures
        self.history = history
        self.ready_lag = ready_lag
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(FiguresCollector(lambda: figures.snapshot(time.time())))
        self.server: ThreadingHTTPServer | None = None

    def start(self, bind: str, port: int) -> tuple[str, str | None]:
        """Listen on bind:port, or on a free port when that one is taken. The URL, and what
        was not as asked (None when all was)."""
        handler = _handler(self)
        note = None
        try:
            self.server = ThreadingHTTPServer((bind, port), handler)
        except OSError as problem:
            if port == 0:
                raise
            self.server = ThreadingHTTPServer((bind, 0), handler)
            note = f"port {port} on {bind} is not free ({problem.strerror or problem})"
        self.server.daemon_threads = True
        thread = threading.Thread(
            target=self.server.serve_forever,
            args=(SERVE_POLL,),
            name="topo-metrics",
            daemon=True,
        )
        thread.start()
        host, bound = self.server.server_address[:2]
        shown = socket.gethostname() if host in ("0.0.0.0", "::") else str(host)
        return f"http://{shown}:{bound}", note

    def stop(self) -> None:
        """Stop serving: the serving thread is woken by connections of its own (until it has
        seen the stop; one that came before the stop was asked for is served as a request)
        rather than left to see the stop at its next look (SERVE_POLL)."""
        server = self.server
        if server is None:
            return
        stopping = threading.Thread(target=server.shutdown, name="topo-metrics-stop")
        stopping.start()
        host, port = server.server_address[:2]
        wake = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(str(host), str(host))
        deadline = time.monotonic() + SERVE_POLL + 1
        while stopping.is_alive() and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                socket.create_connection((wake, port), timeout=1).close()
            stopping.join(timeout=0.1)
        with contextlib.suppress(Exception):
            server.server_close()


def time_range(query: dict[str, list[str]], now: float) -> tuple[float, float]:
    """[since, until] from `seconds=N` or `since=&until=` (unix seconds); bad values are a
    ValueError."""
    if "since" in query:
        since = float(query["since"][0])
        until = float(query.get("until", [str(now)])[0])
    else:
        since = now - float(query.get("seconds", [str(DEFAULT_RANGE)])[0])
        until = now
    if not (math.isfinite(since) and math.isfinite(until)) or since > until:
        raise ValueError("the range must be since <= until")
    return max(since, until - MAX_RANGE), until


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that answers JSON or bytes, uncached, and logs no request (scrapes and page
    refreshes are nobody's news): the driver's endpoint's and `topo dashboard`'s."""

    def _json(self, code: int, body: Any) -> None:
        self._send(code, "application/json", json.dumps(body).encode())

    def _send(self, code: int, content_type: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _handler(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            url = urlparse(self.path)
            if url.path == "/metrics":
                self._send(200, CONTENT_TYPE_LATEST, generate_latest(endpoint.registry))
            elif url.path == "/healthz":
                self._send(200, "text/plain; charset=utf-8", b"ok\n")
            elif url.path == "/readyz":
                found = readiness(endpoint.figures.snapshot(time.time()), endpoint.ready_lag)
                self._json(200 if found["ready"] else 503, found)
            elif url.path == "/history":
                try:
                    since, until = time_range(parse_qs(url.query), time.time())
                except ValueError as problem:
                    self._json(400, {"error": str(problem)})
                    return
                self._json(200, endpoint.history(since, until))
            else:
                self._json(
                    404, {"error": f"no {url.path} here: /metrics, /healthz, /readyz, /history"}
                )

    return Handler
