"""The running driver following its sources, through the reconcile `topo apply` runs
(`ops.reconcile.follow`): what a running job may do on its own (create and grow copies, sync
configs and ACLs; never a delete) is executed here and recorded for `topo status`, and each
flow's topic map comes out of it (source topic -> remote topic, for the topics whose remote
exists). The sources' topics and partition counts, and the flows' copies on their targets,
are looked at often and cheaply (`looker`: the driver's is `spark.cluster_looks`;
`reconcile.watched` says what counts); the whole reconcile runs when they change, and on the
caller's slower beat.
"""

import collections
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from topology.core.errors import TopoError
from topology.core.jobs import JobsDocument
from topology.core.model import Topology
from topology.core.plan.planner import replicated_topics
from topology.kafka import changes, inventory
from topology.ops import reconcile
from topology.telemetry.figures import Figures

APPLIED_KEPT = 50  # the driver's own changes shown by `topo status`, newest last

Maps = dict[str, dict[str, str]]  # flow -> source topic -> remote topic
Look = Callable[[], Mapping[str, int]]  # a cluster's topics -> partition counts, asked now


class Following:
    def __init__(
        self,
        topology: Topology,
        jobs: JobsDocument,
        configs: dict[str, dict[str, str]],
        figures: Figures,
        report: Callable[..., None],
        looker: Callable[[str], Look],
    ) -> None:
        """`looker` gives the look at the named cluster's topics (made once per cluster, by
        the first `watch` that can)."""
        self.topology = topology
        self.jobs = jobs
        self.configs = configs
        self.figures = figures
        self.report = report
        self.specs = {spec.flow: spec for spec in jobs.specs}
        self.applied: collections.deque[dict[str, Any]] = collections.deque(maxlen=APPLIED_KEPT)
        self.made = 0  # changes made (or tried) since the driver started
        self.partitions: dict[str, dict[str, int]] = {}  # cluster -> topic -> count, as seen
        self.looker = looker
        self.looks: dict[str, Look] = {}  # per source and target, made on the first watch
        self.shapes: dict[str, dict[str, int]] = {}
        self.remotes: dict[str, set[str]] = {}  # target -> the flows' copies there, as followed
        self.clusters = inventory.Observers(configs)  # one admin client each, kept

    def sync(self) -> Maps:
        """Reconcile now: make and record what a running job may, and each flow's topic map
        (without the topics whose copy could not be made)."""
        observed: dict[str, Any] = {}

        def observe() -> dict[str, Any]:
            observed.update(self.clusters.observe_all())
            return observed

        def run_change(change: Any) -> None:
            changes.execute(self.configs[change.cluster], change, owner=self.topology.name)

        def create_together(creations: Sequence[Any]) -> Sequence[str | None]:
            config = self.configs[creations[0].cluster]
            return changes.create_topics(config, creations, owner=self.topology.name)

        followed = reconcile.follow(
            self.topology,
            self.jobs.digest,
            observe=observe,
            run_change=run_change,
            running=self.jobs.views(),
            run_together=create_together,
        )
        for applied in followed.applied:
            self._record(applied)
        self.partitions = {
            name: {topic: shape.partitions for topic, shape in cluster.topics.items()}
            for name, cluster in observed.items()
        }
        maps = replicated_topics(self.topology, observed)
        kept = {
            flow: {
                source: remote
                for source, remote in topic_map.items()
                if (self.specs[flow].target, remote) not in followed.failed
            }
            for flow, topic_map in maps.items()
        }
        self.remotes = {}
        for flow, topic_map in kept.items():
            self.remotes.setdefault(self.specs[flow].target, set()).update(topic_map.values())
        return kept

    def forget_shapes(self) -> None:
        """The next `watch` reconciles even when no topic or partition count changed."""
        self.shapes = {}

    def watch(self) -> tuple[Maps | None, str | None]:
        """The flows' topic maps when the sources' topics or partition counts changed since
        the last look, or a flow's copy on its target did (`reconcile.watched`), reconciled
        through `sync`; None when they did not. The second value says why the clusters could
        not be read, if so."""
        sources = {spec.source for spec in self.specs.values()}
        try:
            targets = {spec.target for spec in self.specs.values()}
            for name in sorted((sources | targets) - set(self.looks)):  # each made once, kept
                self.looks[name] = self.looker(name)
            seen = {name: dict(look()) for name, look in self.looks.items()}
            if reconcile.watched(seen, sources, self.remotes) == self.shapes:
                return None, None
            maps = self.sync()
        except TopoError as problem:
            return None, str(problem)
        self.shapes = reconcile.watched(seen, sources, self.remotes)  # the copies just followed
        return maps, None

    def counts(self, flow: str, topic_map: Mapping[str, str]) -> dict[str, int]:
        """The partitions of each of the flow's source topics, as last seen."""
        seen = self.partitions.get(self.specs[flow].source, {})
        return {topic: seen.get(topic, 0) for topic in topic_map}

    def _record(self, applied: Any) -> None:
        self.made += 1
        self.applied.append(applied.to_dict())
        self.figures.change(applied.cluster, applied.resource, applied.action, applied.outcome)
        what = f"{applied.action} {applied.resource} {applied.name} on {applied.cluster}"
        if applied.outcome == "done":
            self.report(f"{what} ({applied.reason})", event="change")
        else:
            problem = applied.detail or applied.outcome
            self.report(f"could not {what}: {problem}", event="change", level="error")
