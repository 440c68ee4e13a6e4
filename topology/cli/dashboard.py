"""`topo dashboard FILE`: serve a live web page of the topology's replication and print its
URL. The charts come from Prometheus with `--prometheus URL`, else from the running driver's
bounded history (found through the status it publishes to topo-runs.internal, so from any
machine that reaches the clusters and the driver's endpoint), else from the history a driver of
this machine saved (docs/metrics.md)."""

import threading
import time
from typing import Annotated

import typer


def dashboard(
    file: Annotated[str, typer.Argument(help="The topology file.")],
    port: Annotated[int, typer.Option(help="The port to serve on (0: a free one).")] = 8464,
    bind: Annotated[str, typer.Option(help="The address to listen on.")] = "127.0.0.1",
    prometheus_url: Annotated[
        str | None,
        typer.Option(
            "--prometheus",
            envvar="TOPO_PROMETHEUS_URL",
            help="Chart from this Prometheus (http://host:9090) instead of the driver's history.",
        ),
    ] = None,
) -> None:
    """Serve a live dashboard of the replication (throughput, latency, lag, errors...)."""
    from topology.cli import live
    from topology.core.errors import TopoError
    from topology.dashboard.server import Dashboard, Source
    from topology.host import jobstate

    loaded = live.load(file)
    owner = loaded.topology.name
    configs = live.client_configs(loaded)
    lock = threading.Lock()
    known: dict[str, object] = {"at": 0.0, "url": None, "stale": True}

    def driver_url() -> tuple[str | None, bool]:
        """The running driver's endpoint from its published status, read at most every 5 s."""
        from topology.ops import runs
        from topology.ops.status import STALE_AFTER

        with lock:
            if time.monotonic() - float(known["at"]) >= 5:  # type: ignore[arg-type]
                known["at"] = time.monotonic()
                try:
                    book = live.run_book(loaded, configs)
                except TopoError:
                    book = None
                entry = book.status(owner) if book is not None else None
                running = book is not None and runs.lease_live(book, owner, time.time())
                url = entry.value.get("metrics_url") if entry is not None and running else None
                age = time.time() - entry.timestamp_ms / 1000 if entry is not None else None
                known["url"] = url if isinstance(url, str) else None
                known["stale"] = age is None or age > STALE_AFTER
            return known["url"], bool(known["stale"])  # type: ignore[return-value]

    source = Source(owner, prometheus_url, driver_url, jobstate.folder(owner) / "history.json")
    server = Dashboard(source)
    try:
        url = server.start(bind, port)
    except OSError as problem:
        raise TopoError(f"cannot serve on {bind}:{port}: {problem.strerror or problem}") from None
    origin = f"Prometheus at {prometheus_url}" if prometheus_url else "the running driver"
    typer.echo(f"Dashboard of {owner} ({origin}): {url}", err=False)
    typer.echo("Press Ctrl-C to stop.", err=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
