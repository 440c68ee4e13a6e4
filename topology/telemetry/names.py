"""Every metric the driver exports: name, type, labels and HELP text, in one place.

docs/metrics.md lists them and the Grafana dashboard (`dashboards/grafana-topo.json`) may only
query these; both are checked against this catalogue by the tests.
"""

from dataclasses import dataclass

FLOW = ("flow", "source", "target")
TOPIC = (*FLOW, "topic")


@dataclass(frozen=True)
class Metric:
    name: str  # as exposed; a counter's name ends in _total, a histogram's series add suffixes
    kind: str  # counter | gauge | histogram | summary
    labels: tuple[str, ...]
    help: str


CATALOGUE: tuple[Metric, ...] = (
    Metric("topo_info", "gauge", ("owner", "mode", "runner", "host"),
           "The running driver: always 1, its identity in the labels."),
    Metric("topo_start_time_seconds", "gauge", (), "When the driver started (unix time)."),
    Metric("topo_flow_up", "gauge", FLOW,
           "1 while the flow's copy runs, 0 while it waits, restarts or has failed."),
    Metric("topo_flow_state", "gauge", (*FLOW, "state"),
           "1 for the flow's current state (starting, running, waiting for topics, paused, "
           "restarting, failed, done, stopped), 0 for the others it has had."),
    Metric("topo_records_copied_total", "counter", TOPIC,
           "Records written to the target (after the loop rules and the record filter)."),
    Metric("topo_bytes_copied_total", "counter", TOPIC,
           "Key and value bytes of the records written to the target."),
    Metric("topo_replication_lag_records", "gauge", TOPIC,
           "Records the source partitions hold beyond what the flow has copied, summed per topic."),
    Metric("topo_replication_lag_seconds", "gauge", TOPIC,
           "How far behind the copy is in time: now minus the source timestamp of the newest "
           "record copied, while records wait; 0 when none wait."),
    Metric("topo_replication_latency_seconds", "histogram", FLOW,
           "Per record: from its source timestamp to the poll that copied it."),
    Metric("topo_topic_replication_latency_seconds", "summary", TOPIC,
           "Per record, per topic: from its source timestamp to the poll that copied it (sum "
           "and count: the mean)."),
    Metric("topo_heartbeat_latency_seconds", "histogram", FLOW,
           "End to end, from the heartbeats: emitted on the source, appended on the target."),
    Metric("topo_topics_synced", "gauge", FLOW, "Topics the flow copies now."),
    Metric("topo_partitions_followed", "gauge", FLOW,
           "Source partitions the flow has read from."),
    Metric("topo_topics_discovered_total", "counter", FLOW,
           "Source topics the running driver found and joined to the flow after it started."),
    Metric("topo_changes_total", "counter", ("cluster", "resource", "action", "outcome"),
           "Changes the running driver made on its own (topics created, partitions added, "
           "configs and ACLs synced), by outcome (done, failed, not attempted)."),
    Metric("topo_errors_total", "counter", (*FLOW, "kind"),
           "Errors by kind: query (the flow's copy stopped on an error), progress (its progress "
           "could not be recorded), offsets (a checkpoint round failed), state (topo-runs.internal "
           "could not be reached)."),
    Metric("topo_restarts_total", "counter", (*FLOW, "reason"),
           "Restarts by reason: retry (a flow's copy loop after an error, from its committed "
           "positions; new topics and partitions join a running loop without one)."),
    Metric("topo_last_restart_time_seconds", "gauge", FLOW,
           "When the flow's copy last restarted (unix time)."),
    Metric("topo_checkpoint_rounds_total", "counter", (),
           "Rounds of consumer group checkpoints and offset sync run."),
    Metric("topo_checkpoints_written_total", "counter", (), "Checkpoint records written."),
    Metric("topo_groups_synced_total", "counter", ("group",),
           "Times a consumer group's translated offsets were committed on a target."),
    Metric("topo_checkpoint_age_seconds", "gauge", (*FLOW, "group"),
           "Age of the newest checkpoint written for a consumer group."),
    Metric("topo_records_lost_total", "counter", (*TOPIC, "kind"),
           "Records the source no longer held when the copy came to them: kind retention "
           "(removed before they were copied); the copy loop counts them (docs/engine.md)."),
    Metric("topo_losses_total", "counter", (*TOPIC, "kind"),
           "Losses found: retention (records removed before they were copied), reset (the "
           "source partition's log is behind the copy), recreated (the source topic was made "
           "again) or target (the copy's topic on the target was; its name is the topic label)."),
    Metric("topo_heartbeat_age_seconds", "gauge", FLOW,
           "Seconds since the newest heartbeat copied to the target was emitted on the source "
           "(since the driver started while none was); only for flows that copy heartbeats."),
    Metric("topo_objective", "gauge", (*FLOW, "objective"),
           "Each objective the topology declares for the flow: its bound (a floor for "
           "min_records_per_second, a ceiling for the others)."),
    Metric("topo_objective_breached", "gauge", (*FLOW, "objective"),
           "1 while the objective is breached (its measure past its bound for its for_seconds), "
           "else 0."),
)  # fmt: skip

BY_NAME = {metric.name: metric for metric in CATALOGUE}


def series_names() -> set[str]:
    """Every series name a scrape can show: a histogram's _bucket, _sum and _count, a
    summary's _sum and _count, the others as named."""
    found: set[str] = set()
    for metric in CATALOGUE:
        if metric.kind == "histogram":
            found |= {f"{metric.name}_bucket", f"{metric.name}_sum", f"{metric.name}_count"}
        elif metric.kind == "summary":
            found |= {f"{metric.name}_sum", f"{metric.name}_count"}
        else:
            found.add(metric.name)
    return found
