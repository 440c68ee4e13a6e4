"""`topo dashboard`'s web server: the page (topology/resources/dashboard/index.html), the
plotly.js the plotly package ships, and /api/history, the history document of a range, asked
of Prometheus when one is given (`prometheus.queries`, one range query per series), else of the
running driver's /history (its address is in the status the driver publishes), else read from
the history file a driver on this machine saved."""

import contextlib
import importlib.util
import json
import math
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from topology.dashboard import prometheus
from topology.telemetry.server import QuietHandler, time_range

POINTS = 360  # samples a Prometheus range is asked for, whatever its length
TIMEOUT = 10.0


def plotly_js() -> bytes:
    """plotly.js as the plotly Python package ships it (no CDN, no download)."""
    found = importlib.util.find_spec("plotly")
    if found is None or found.origin is None:
        raise OSError("the plotly package is not installed (`pip install topo` brings it)")
    return (Path(found.origin).parent / "package_data" / "plotly.min.js").read_bytes()


def page() -> bytes:
    return resources.files("topology").joinpath("resources/dashboard/index.html").read_bytes()


class Source:
    """Where the history comes from: `fetch(since, until)` -> the history document."""

    def __init__(
        self,
        owner: str,
        prometheus_url: str | None,
        driver_url: Callable[[], tuple[str | None, bool]],
        saved: Path | None,
    ) -> None:
        self.owner = owner
        self.prometheus_url = prometheus_url.rstrip("/") if prometheus_url else None
        self.driver_url = driver_url  # () -> (the driver's endpoint or None, its status is stale)
        self.saved = saved

    def fetch(self, since: float, until: float) -> dict[str, Any]:
        if self.prometheus_url is not None:
            return self._prometheus(since, until)
        url, stale = self.driver_url()
        if url is not None:
            query = urllib.parse.urlencode({"since": since, "until": until})
            try:
                document: dict[str, Any] = _get_json(f"{url}/history?{query}")
            except (OSError, ValueError):
                document = {}
            if document.get("owner") == self.owner:  # not another topology's driver
                return {**document, "stale": stale or bool(document.get("stale"))}
        return self._saved(since, until)

    def _prometheus(self, since: float, until: float) -> dict[str, Any]:
        step = max(1.0, math.ceil((until - since) / POINTS))
        results: dict[str, Any] = {}
        for name, query in prometheus.queries(self.owner).items():
            params = urllib.parse.urlencode(prometheus.range_params(query, since, until, step))
            answer = _get_json(f"{self.prometheus_url}/api/v1/query_range?{params}")
            results[name] = answer.get("data", {})
        return prometheus.history(self.owner, results, since, until, step, time.time())

    def _saved(self, since: float, until: float) -> dict[str, Any]:
        """The history a driver of this machine saved (no driver runs, or it is unreachable)."""
        from topology.telemetry.history import History, document

        data = None
        if self.saved is not None:
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(self.saved.read_text(encoding="utf-8"))
        history = History.from_dict(data, time.time())
        return document(self.owner, history, [], since, until, time.time(), stale=True)


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as answer:
        found = json.loads(answer.read())
    return found if isinstance(found, dict) else {}


class Dashboard:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.server: ThreadingHTTPServer | None = None

    def start(self, bind: str, port: int) -> str:
        self.server = ThreadingHTTPServer((bind, port), _handler(self.source))
        self.server.daemon_threads = True
        threading.Thread(
            target=self.server.serve_forever, name="topo-dashboard", daemon=True
        ).start()
        host, bound = self.server.server_address[:2]
        return f"http://{host!s}:{bound}/"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _handler(source: Source) -> type[BaseHTTPRequestHandler]:
    script = plotly_js()
    html = page()

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlparse(self.path)
            if url.path in ("/", "/index.html"):
                self._send(200, "text/html; charset=utf-8", html)
            elif url.path == "/static/plotly.min.js":
                self._send(200, "text/javascript; charset=utf-8", script)
            elif url.path == "/api/history":
                try:
                    since, until = time_range(urllib.parse.parse_qs(url.query), time.time())
                    body = source.fetch(since, until)
                except ValueError as problem:
                    self._json(400, {"error": str(problem)})
                except (OSError, urllib.error.URLError) as problem:
                    self._json(502, {"error": f"cannot read the history: {problem}"})
                except Exception as problem:  # an answer of a shape not foreseen: said, not hung
                    self._json(502, {"error": f"cannot read the history: {problem!r}"})
                else:
                    self._json(200, body)
            else:
                self._json(404, {"error": f"no {url.path} here"})

    return Handler
