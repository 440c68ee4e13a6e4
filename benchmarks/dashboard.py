"""How long `topo dashboard`'s page takes to load and draw 24 hours of history for many topics,
in a real headless Chromium.

A driver's bounded history is filled with 24 h of samples (its two tiers, full) for one flow
of `--topics` topics, served by the dashboard's own server, and the page is loaded `--runs`
times for each range; printed: the size of /api/history's answer, the server's time to build
it, and the time from navigation until the page has drawn (body[data-ready]). Needs Chromium
(Debian's package) and playwright (the dev extra). No Kafka, no Spark.

    .venv/bin/python benchmarks/dashboard.py [--topics 50] [--runs 5]
"""

import argparse
import json
import shutil
import statistics
import time
import urllib.request

from topology.core.progress import LATENCY_BUCKETS, FlowProgress, TopicCopied
from topology.dashboard.server import Dashboard, Source
from topology.telemetry.figures import Figures
from topology.telemetry.history import History, document

FLOW = "east->west"
RANGES = {"15 min": 900, "1 h": 3600, "12 h": 43200, "24 h": 86400}


def filled(topics: int, now: float) -> History:
    """24 h of samples every 2 s for one flow of `topics` topics copying 1,000 records/s."""
    figures = Figures("bench", {"mode": "continuous"}, {FLOW: ("east", "west")}, now - 86400)
    figures.state(FLOW, "running")
    names = [f"topic-{i:03d}" for i in range(topics)]
    history = History()
    per_topic = max(1, 1000 // topics) * 10
    total = per_topic * topics
    bounds = len(LATENCY_BUCKETS)
    for tick in range(0, 86400 + 1, 10):
        newest = int((now - 86400 + tick) * 1000)
        copied = TopicCopied(per_topic, per_topic * 1024, per_topic * 300, newest)
        report = FlowProgress(
            run="bench",
            sequence=tick,
            records=total,
            bytes=total * 1024,
            latency_ms=total * 300,
            buckets=tuple(total * (index + 1) // bounds for index in range(bounds)),
            topics=dict.fromkeys(names, copied),
            positions={},
            ends={},
        )
        figures.progress(FLOW, report)
        figures.lag(FLOW, dict.fromkeys(names, tick % 50))
        history.add(figures.snapshot(now - 86400 + tick))
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("needs Chromium: apt-get install chromium")
    now = time.time()
    made = time.monotonic()
    history = filled(args.topics, now)
    print(f"history of 24 h for {args.topics} topics made in {time.monotonic() - made:.1f} s")
    graph = [{"flow": FLOW, "source": "east", "target": "west", "state": "running"}]

    class Fixed(Source):
        def fetch(self, since: float, until: float) -> dict:  # type: ignore[type-arg]
            shift = time.time() - now  # the history ends now, whenever that is
            return document("bench", history, graph, since - shift, until - shift, now)

    server = Dashboard(Fixed("bench", None, lambda: (None, False), None))
    url = server.start("127.0.0.1", 0)
    print(
        f"{'range':>7}  {'samples':>7}  {'answer':>9}  {'server':>8}  "
        f"{'load and draw (median [min-max])':>30}"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for name, seconds in RANGES.items():
            started = time.monotonic()
            with urllib.request.urlopen(f"{url}api/history?seconds={seconds}") as answer:
                body = answer.read()
            served = time.monotonic() - started
            samples = len(json.loads(body)["samples"])
            times = []
            for _ in range(args.runs):
                page = browser.new_page(viewport={"width": 1400, "height": 1800})
                started = time.monotonic()
                page.goto(url)  # its default range, 15 min; then the range measured
                page.wait_for_selector('body[data-ready="1"]', timeout=120_000)
                if seconds != 900:
                    page.select_option("#range", str(seconds))
                    page.wait_for_function(
                        f"Number(document.body.dataset.samples) === {samples}", timeout=120_000
                    )
                times.append(time.monotonic() - started)
                page.close()
            middle, low, high = statistics.median(times), min(times), max(times)
            print(
                f"{name:>7}  {samples:>7}  {len(body) / 1e6:7.2f}MB  {served:6.2f} s  "
                f"{middle:8.2f} s [{low:.2f}-{high:.2f}]"
            )
        browser.close()
    server.stop()


if __name__ == "__main__":
    main()
