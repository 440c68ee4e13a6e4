"""The driver's metrics endpoint (`telemetry/server.py`) stops at once: its serving thread,
which looks for a stop only every SERVE_POLL seconds while no request comes, is woken by the
stop itself. A real HTTP server on a free port of this machine; no Kafka, no Spark."""

import threading
import urllib.request

import pytest

from topology.telemetry import server
from topology.telemetry.figures import Figures


@pytest.mark.timeout(60)
def test_a_stop_wakes_the_serving_thread_and_frees_its_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Were the stop left to the serving thread's next look, this would wait an hour (and the
    # test's timeout would fail it).
    monkeypatch.setattr(server, "SERVE_POLL", 3600.0)
    endpoint = server.Endpoint(Figures("o", {}, {}, 0.0), lambda since, until: {}, 1000)
    url, note = endpoint.start("127.0.0.1", 0)
    assert note is None
    with urllib.request.urlopen(f"{url}/healthz", timeout=5) as answer:
        assert answer.status == 200
    serving = [t for t in threading.enumerate() if t.name == "topo-metrics"]
    assert serving
    endpoint.stop()
    for thread in serving:
        thread.join(timeout=10)
        assert not thread.is_alive()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/healthz", timeout=2)
