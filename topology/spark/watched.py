"""What makes the running driver watchable: its figures (topology/telemetry/figures.py), the
HTTP endpoint that serves them (/metrics, /healthz, /readyz, /history) and, on a thread of its
own, the heartbeat latencies read back from the targets, each flow's lag (the sources' ends
against its read positions: core/lag_look.py) and the history sampled and saved."""

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from topology.core.errors import TopoError
from topology.core.jobs import JobSpec
from topology.core.lag_look import LagLook, Reported
from topology.core.model import MetricsEndpoint, Objectives
from topology.core.naming import heartbeats_copy
from topology.core.objectives import Watch
from topology.core.topic_ids import IdLook, IdWatch
from topology.host import jobstate
from topology.kafka import heartbeats
from topology.telemetry import history as history_document
from topology.telemetry.figures import Figures, Snapshot
from topology.telemetry.health import measures
from topology.telemetry.history import FORMAT, History
from topology.telemetry.server import Endpoint

HISTORY_FILE = "history.json"
SAMPLE_EVERY = 2.0  # the history's tiers take what is due
BEATS_EVERY = 5.0  # heartbeat copies read back on the targets, each flow's lag measured
Positions = Mapping[str, Mapping[tuple[str, int], int]]  # flow -> (topic, partition) -> offset
T = TypeVar("T")
LOOKS = {"ids": "topics' ids", "ends": "partitions' ends"}  # what `Watched._asked` asks


class ClusterLooks(Protocol):
    """The looks at one cluster this thread makes (the driver's: `spark.cluster_looks`)."""

    def ids(self, topics: Iterable[str]) -> dict[str, str]:
        """Each topic's id; one that does not exist left out; KafkaUnavailableError."""
        ...

    def ends(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Each partition's last stable offset; one that does not exist left out;
        KafkaUnavailableError when any end cannot be had."""
        ...


class Watched:
    def __init__(
        self,
        owner: str,
        info: Mapping[str, str],
        specs: Mapping[str, JobSpec],
        configs: Mapping[str, dict[str, str]],
        folder: Path,
        report: Callable[[str], None],
        positions: Callable[[], Positions] = dict,
        reported: Callable[[], Mapping[str, Reported]] = dict,
        objectives: Mapping[str, Objectives] | None = None,
        maps: Callable[[], Mapping[str, Mapping[str, str]]] = dict,
        *,
        looker: Callable[[str], ClusterLooks],
    ) -> None:
        """`looker` gives the looks at the named cluster (made once per cluster, on first
        use)."""
        self.owner = owner
        self.specs = specs
        self.configs = configs
        self.folder = folder
        self.report = report
        self.positions = positions
        self.reported = reported  # flow -> the ends its copy reported last
        self.maps = maps  # flow -> its copy's topic map, source -> target
        self.looker = looker
        self.cluster_looks: dict[str, ClusterLooks] = {}  # by cluster, made on first use
        self.failing: set[tuple[str, str]] = set()  # (cluster, look) not answered, reported
        self.id_looks: dict[str, IdLook] = {}  # by cluster: which ids to ask for, and when
        self.id_watches = {flow: IdWatch() for flow in specs}
        self.looks: dict[str, LagLook] = {}  # by source cluster: its ends asked, and when
        self.beats: dict[str, heartbeats.CopiedBeats] = {}  # by flow, made on first use
        flows = {flow: (spec.source, spec.target) for flow, spec in specs.items()}
        self.figures = Figures(owner, info, flows, time.time())
        for flow, spec in specs.items():
            if spec.heartbeats:
                self.figures.expect_heartbeats(flow)
        self.history = History.from_dict(jobstate.read_json(folder / HISTORY_FILE), time.time())
        self.lock = threading.Lock()
        self.endpoint: Endpoint | None = None
        self.url: str | None = None
        # Heartbeats emitted before this driver started are not this driver's to count.
        self.newest_beat = dict.fromkeys(specs, int(time.time() * 1000))
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        self.serving = False  # the metrics are on: figures sampled, history kept
        self.watches = {
            flow: Watch(declared)
            for flow, declared in (objectives or {}).items()
            if flow in specs and declared.declared()
        }

    def start(self, settings: MetricsEndpoint | None) -> None:
        """Serve the endpoint and start the sampling thread. With `metrics: false` nothing is
        served or sampled, but the thread still watches the topics' ids: a topic deleted and
        made again under a copy is a loss whatever the metrics."""
        self.serving = settings is not None
        if settings is not None:
            self.endpoint = Endpoint(self.figures, self.document, settings.ready_lag)
            try:
                self.url, note = self.endpoint.start(settings.bind, settings.port)
            except OSError as problem:
                self.report(f"metrics: cannot listen on {settings.bind}:{settings.port}: {problem}")
                self.endpoint = None
            else:
                if note is not None:
                    self.report(f"metrics: {note}; serving on {self.url} instead")
                self.report(f"metrics: {self.url}/metrics (also /healthz, /readyz, /history)")
        self.thread = threading.Thread(target=self._loop, name="topo-telemetry", daemon=True)
        self.thread.start()

    def graph(self) -> list[dict[str, Any]]:
        snapshot = self.figures.snapshot(time.time())
        return [
            {"flow": flow, "source": f.source, "target": f.target, "state": f.state}
            for flow, f in snapshot.flows.items()
        ]

    def document(self, since: float, until: float) -> dict[str, Any]:
        with self.lock:
            return history_document.document(
                self.owner, self.history, self.graph(), since, until, time.time()
            )

    def _loop(self) -> None:
        due_beats = 0.0
        while not self.done.wait(SAMPLE_EVERY):
            try:
                if self.serving:
                    self.sample()  # first: a slow heartbeat read must not leave gaps
                now = time.monotonic()
                if now >= due_beats and not self.done.is_set():
                    due_beats = now + BEATS_EVERY
                    if self.serving:
                        self._guarded(self._lags)
                        self._guarded(self._beats)
                    self._guarded(self._topic_ids)
            except Exception as problem:  # the copy goes on; so does this thread
                self.report(f"metrics: {type(problem).__name__}: {problem}")

    def _guarded(self, step: Callable[[], None]) -> None:
        """One of the thread's looks: its failure must not keep the others from running."""
        try:
            step()
        except Exception as problem:
            self.report(f"metrics: {type(problem).__name__}: {problem}")

    def sample(self) -> None:
        snapshot = self.figures.snapshot(time.time())
        self.judge(snapshot)
        with self.lock:
            taken = self.history.add(snapshot)
        if taken:
            self.save()

    def judge(self, snapshot: Snapshot) -> None:
        """Each flow's objectives against its measures now (topology/core/objectives.py)."""
        for flow, watch in self.watches.items():
            judged = watch.update(snapshot.time, measures(snapshot, snapshot.flows[flow]))
            self.figures.objectives(flow, judged)
            snapshot.flows[flow].judged = judged  # the history's sample carries this judgement

    def save(self) -> None:
        with self.lock:
            tiers = self.history.saved()
        text = json.dumps({"format": FORMAT, "tiers": tiers})
        try:
            path = self.folder / HISTORY_FILE
            temporary = path.with_suffix(".tmp")
            temporary.write_text(text, encoding="utf-8")
            temporary.replace(path)
        except OSError as problem:
            self.report(f"metrics: could not save the history: {problem}")

    def _lags(self) -> None:
        """Each flow's lag per topic: what the source partitions hold beyond the flow's read
        positions, to the newer of the ends its copy reported and the ends the source gave
        (core/lag_look.py: the source is asked about every partition once a minute, and in
        between only about those no end is known for). A source that does not answer leaves
        its partitions' ends as last known."""
        positions = {flow: read for flow, read in self.positions().items() if read}
        reported = self.reported()
        by_source: dict[str, list[str]] = {}
        for flow in positions:
            by_source.setdefault(self.specs[flow].source, []).append(flow)
        for source, flows in by_source.items():
            look = self.looks.setdefault(source, LagLook())
            read = {partition for flow in flows for partition in positions[flow]}
            now = time.monotonic()  # before asking: a report during the look is newer
            wanted, whole = look.wanted(now, read, [reported[f] for f in flows if f in reported])
            if wanted:
                ends = self._asked(source, "ends", lambda looks: looks.ends(wanted))  # noqa: B023
                if ends is not None:  # (not answered: the next look asks again)
                    look.answered(now, wanted, ends, whole)
            for flow in flows:
                self.figures.lag(flow, look.lag(positions[flow], reported.get(flow)))

    def _topic_ids(self) -> None:
        """Each flow's topics deleted and made again under its copy, on either side
        (core/topic_ids.py): a loss, counted and reported. Each cluster is asked only for the
        ids `IdLook` says are due."""
        maps = {flow: dict(topic_map) for flow, topic_map in self.maps().items() if topic_map}
        wanted: dict[str, set[str]] = {}
        for flow, topic_map in maps.items():
            spec = self.specs[flow]
            wanted.setdefault(spec.source, set()).update(topic_map)
            wanted.setdefault(spec.target, set()).update(topic_map.values())
        ids: dict[str, dict[str, str]] = {}
        for cluster, topics in wanted.items():
            look = self.id_looks.setdefault(cluster, IdLook())
            look.forget(topics)
            at = time.monotonic()
            asking = look.wanted(at, topics)
            if not asking:
                continue
            answer = self._asked(cluster, "ids", lambda looks: looks.ids(asking))  # noqa: B023
            if answer is None:
                continue  # not answered: its ids stay as last seen, and are asked for again
            ids[cluster] = answer
            look.answered(at, asking, answer)
        now = time.time()
        for flow, topic_map in maps.items():
            spec = self.specs[flow]
            source, target = ids.get(spec.source, {}), ids.get(spec.target, {})
            found = self.id_watches[flow].look(
                {t: source[t] for t in topic_map if t in source},
                {t: target[t] for t in topic_map.values() if t in target},
            )
            for loss in self.figures.lost(flow, found, now):
                self.report(f"{flow}: LOST: {loss.describe()} (on_loss: {spec.on_loss})")

    def _asked(self, cluster: str, what: str, ask: Callable[[ClusterLooks], T]) -> T | None:
        """A look at `cluster`'s `what` (`ask`, called here and now): its answer, or None when it
        gives none. That is reported once, and so is its first answer after."""
        try:
            if cluster not in self.cluster_looks:
                self.cluster_looks[cluster] = self.looker(cluster)
            answer = ask(self.cluster_looks[cluster])
        except TopoError as problem:
            if (cluster, what) not in self.failing:
                self.failing.add((cluster, what))
                self.report(f"metrics: {problem} (asked again at each look)")
            return None
        if (cluster, what) in self.failing:
            self.failing.discard((cluster, what))
            self.report(f"metrics: {cluster} answers the look at its {LOOKS[what]} again")
        return answer

    def _beats(self) -> None:
        """Each flow's heartbeats copied to its target since the last look (one consumer per
        flow, kept): their latencies."""
        for flow, spec in self.specs.items():
            if not spec.heartbeats:
                continue
            if flow not in self.beats:
                topic = heartbeats_copy(spec.source, spec.separator)
                self.beats[flow] = heartbeats.CopiedBeats(self.configs[spec.target], topic)
            found = self.beats[flow].since_last()
            if found is None:
                continue  # the target is away: the next look sees
            newest = self.newest_beat.get(flow, 0)
            mine = [
                beat
                for beat in found
                if beat.source == spec.source
                and beat.target == spec.target
                and beat.emitted_ms > newest
            ]
            if mine:
                self.newest_beat[flow] = max(beat.emitted_ms for beat in mine)
                # (A copy topic MM2 made keeps the emit time: no latency to tell.)
                latencies = [max(0, b.latency_ms) / 1000 for b in mine if b.latency_ms is not None]
                self.figures.heartbeats(flow, latencies, self.newest_beat[flow])

    def stop(self) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join(timeout=1)
        if self.thread is None or not self.thread.is_alive():
            for reader in self.beats.values():
                reader.close()
        if not self.serving:
            return  # `metrics: false`: nothing was served, sampled or saved
        self.sample()
        self.save()
        if self.endpoint is not None:
            self.endpoint.stop()
