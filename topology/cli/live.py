"""What `topo plan` and `topo apply` share: load a topology, observe its clusters, plan.

The edge of the pipeline: it reads the file and the environment (for secret references),
connects to the clusters, and hands plain values to the pure planner. Progress goes to stderr,
so stdout stays for the plan itself.

Every plan is followed by a check of the permissions topo's principal needs for it
(docs/security.md): each one missing stops `topo plan` and `topo apply` before anything is
printed or changed, with the `kafka-acls.sh` line that grants it. When reading a cluster is
refused, the same check says which permission reading it needs.
"""

import hashlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from topology import __version__
from topology.errors import KafkaUnavailableError, TopoError
from topology.model import Topology
from topology.observed import Cluster
from topology.plan.model import Plan

if TYPE_CHECKING:
    from topology.mm2.positions import Handover
    from topology.permissions import Findings, Missing
    from topology.runstate import Book

OBSERVE_TIMEOUT = 15.0
REFUSAL_TIMEOUT = 10.0  # asking a cluster that refused to be read what topo may do there


@dataclass(frozen=True)
class Loaded:
    file: str
    sha256: str
    topology: Topology


def load(file: str) -> Loaded:
    """The analysed topology; its diagnostics shown, and an error if any is an error."""
    from topology.analysis import analyse
    from topology.cli.files import read_text
    from topology.cli.report import show

    text = read_text(file)
    analysis = analyse(text, file)
    show(analysis.diagnostics, analysis.document)
    if not analysis.ok or analysis.topology is None:
        raise TopoError(f"{file} has errors (shown above); fix them, then plan again")
    return Loaded(file, hashlib.sha256(text.encode()).hexdigest(), analysis.topology)


class MissingPermissionsError(TopoError):
    """topo's principal lacks permissions the plan needs (listed on stderr before this)."""


class ClientConfigs(dict[str, dict[str, str]]):
    """Each cluster's client settings, and the topology they are for (to name its principals
    when a permission is missing)."""

    def __init__(self, settings: dict[str, dict[str, str]], topology: Topology) -> None:
        super().__init__(settings)
        self.topology = topology


def client_configs(loaded: Loaded) -> dict[str, dict[str, str]]:
    """Each cluster's client settings, secrets resolved now (never printed, never planned)."""
    from topology.connection import client_config

    base = Path(loaded.file).parent
    settings = {
        name: client_config(cluster, environ=os.environ, base=base)
        for name, cluster in loaded.topology.clusters.items()
    }
    return ClientConfigs(settings, loaded.topology)


def observe(configs: dict[str, dict[str, str]]) -> dict[str, Cluster]:
    from topology.kafka import inventory

    names = ", ".join(sorted(configs))
    typer.echo(f"Reading {len(configs)} cluster(s): {names} ...", err=True)
    started = time.monotonic()
    try:
        clusters = inventory.observe_all(configs, timeout=OBSERVE_TIMEOUT)
    except KafkaUnavailableError as problem:
        if _refused(str(problem)) and isinstance(configs, ClientConfigs):
            _explain_refusal(configs, str(problem))
        raise
    topics = sum(len(cluster.topics) for cluster in clusters.values())
    typer.echo(f"Read {topics} topic(s) in {time.monotonic() - started:.1f}s.", err=True)
    return clusters


def _refused(message: str) -> bool:
    """Does a failure to read a cluster say the broker refused something?"""
    return "authorization failed" in message.lower() or "may not describe" in message.lower()


def _explain_refusal(configs: ClientConfigs, message: str) -> None:
    """Reading a cluster was refused: ask each cluster what topo may do with what it can see,
    and stop with the permissions reading needs and lacks. Returns when none is found (the
    caller then raises the failure as it was)."""
    from topology import permissions
    from topology.kafka import permissions as asking

    topology = configs.topology
    named = [name for name in configs if f"cluster {name} (" in message]
    accesses = {}
    for name in sorted(named or configs):
        principal = permissions.principal_matched(topology.clusters[name], configs[name])
        try:
            accesses[name] = asking.ask_for_reading(
                name, configs[name], principal=principal, timeout=REFUSAL_TIMEOUT
            )
        except TopoError:
            continue
    needed = [p for access in accesses.values() for p in permissions.observing(access)]
    findings = permissions.missing(
        needed, accesses, bootstraps=_bootstraps(topology), principals=_principals(topology)
    )
    if findings.errors:
        _report(findings)
        raise MissingPermissionsError(_summary(findings))


def check_permissions(loaded: Loaded, clusters: dict[str, Cluster], plan: Plan) -> None:
    """Stop (MissingPermissionsError) when topo's principal lacks a permission the plan, or the
    replication it starts, needs; say which, with the kafka-acls.sh line granting each. Asks
    each cluster with an authorizer, changing nothing (topology/kafka/permissions.py)."""
    from topology import permissions
    from topology.kafka import permissions as asking

    topology = loaded.topology
    configs = client_configs(loaded)
    needed = permissions.required(topology, plan, clusters)
    principals = {
        name: permissions.principal_matched(cluster, configs[name])
        for name, cluster in topology.clusters.items()
    }
    accesses = asking.ask_all(configs, clusters, needed, principals, timeout=OBSERVE_TIMEOUT)
    findings = permissions.missing(
        needed, accesses, bootstraps=_bootstraps(topology), principals=_principals(topology)
    )
    _report(findings)
    if findings.errors:
        raise MissingPermissionsError(_summary(findings))


def _bootstraps(topology: Topology) -> dict[str, str]:
    from topology import permissions

    return {n: permissions.bootstrap_shown(c.bootstrap) for n, c in topology.clusters.items()}


def _principals(topology: Topology) -> dict[str, str]:
    from topology import permissions

    return {n: permissions.principal_shown(c) for n, c in topology.clusters.items()}


def _report(findings: "Findings") -> None:
    """The findings on stderr: what is missing (errors, then warnings), then notes."""

    def say(line: str) -> None:
        typer.echo(line, err=True)

    if findings.errors:
        say(f"topo's principal lacks {len(findings.errors)} permission(s) it needs; nothing was "
            "changed. Grant each with the line under it, as a Kafka administrator (add "
            "--command-config with the administrator's client settings):")  # fmt: skip
        for missing in findings.errors:
            _show(missing)
    if findings.warnings:
        if findings.errors:
            say("")
        say(f"Warning: topo's principal lacks {len(findings.warnings)} permission(s) a later "
            "change will need (until then nothing fails):")  # fmt: skip
        for missing in findings.warnings:
            _show(missing)
    for note in findings.notes:
        say(f"Permissions: {note}")
    if findings.unchecked:
        say(f"Permissions: not checked on {', '.join(findings.unchecked)} (no authorizer).")
    if findings.checked and not findings.missing:
        say(f"Permissions: none missing on {', '.join(findings.checked)}.")


def _show(missing: "Missing") -> None:
    permission = missing.permission
    typer.echo(f"\n  {permission.cluster}: {permission.describe()}", err=True)
    typer.echo(f"    for: {permission.why}; known from {missing.judged}", err=True)
    typer.echo(f"    {missing.grant}", err=True)


def _summary(findings: "Findings") -> str:
    clusters = sorted({m.permission.cluster for m in findings.errors})
    return (
        f"{len(findings.errors)} permission(s) missing on {', '.join(clusters)} (listed above); "
        "grant them, then plan again"
    )


def run_book(loaded: Loaded, configs: dict[str, dict[str, str]] | None = None) -> "Book | None":
    """What topo-runs.internal on the home cluster says about this topology (its jobs, lease,
    status, stop requests); None before the first apply made the topic, or without flows."""
    from topology.errors import TopicNotFoundError
    from topology.kafka.runlog import RunLog

    home = loaded.topology.home
    if home is None or loaded.topology.engine.runner == "none":
        return None
    settings = configs if configs is not None else client_configs(loaded)
    try:
        with RunLog(settings[home], loaded.topology.name, cluster=home) as log:
            return log.read()
    except TopicNotFoundError:
        return None


def lease_live(book: "Book", owner: str) -> bool:
    """Does a driver hold the topology's lease and renew it? (`ops.runs.lease_live`, judged
    with this machine's clock.)"""
    from topology.ops import runs

    return runs.lease_live(book, owner, time.time())


def running_jobs(loaded: Loaded) -> dict[str, dict[str, Any]]:
    """The topology's replication jobs running now, on any machine, as `topo plan` compares
    them (`ops.runs.running_jobs` over the run log read now)."""
    from topology.ops import runs

    book = run_book(loaded)
    if book is None:
        return {}
    return runs.running_jobs(book, loaded.topology.name, time.time())


def make_plan(
    loaded: Loaded,
    clusters: dict[str, Cluster],
    allow_delete: bool,
    configs: dict[str, dict[str, str]] | None = None,
) -> Plan:
    """The plan, once the permissions it needs are checked (MissingPermissionsError if not)."""
    from topology.ops import reconcile

    running = running_jobs(loaded)
    plan = reconcile.plan_now(
        loaded.topology,
        loaded.sha256,
        clusters,
        running=running,
        allow_delete=allow_delete,
        version=__version__,
        handovers=handovers(loaded, clusters, configs, running),
    ).plan
    check_permissions(loaded, clusters, plan)
    return plan


def handovers(
    loaded: Loaded,
    clusters: Mapping[str, Cluster],
    configs: dict[str, dict[str, str]] | None,
    running: Mapping[str, Any],
) -> dict[str, "Handover"]:
    """What MirrorMaker 2 left for each flow that takes over from it (`start: mm2`), is not
    running and has not copied yet (its progress log has nothing of the topics it copies):
    its positions and whether it still runs, read from the flow's target."""
    from topology.jobs import specs_of
    from topology.kafka import mm2_state
    from topology.kafka.offsets import read_progress
    from topology.mm2.positions import names_of
    from topology.naming import HEARTBEATS, offset_syncs_topic
    from topology.plan.planner import replicated_topics

    if loaded.topology.engine.runner == "none":
        return {}  # no flow is started: there is nothing to hand over to
    copied = replicated_topics(loaded.topology, clusters)
    found = {}
    for spec in specs_of(loaded.topology):
        if spec.start == "mm2" and spec.flow not in running:
            configs = configs if configs is not None else client_configs(loaded)
            log = offset_syncs_topic(spec.source, spec.separator)
            reached = read_progress(configs[spec.target], log, spec.flow)
            if any(t in copied[spec.flow] and t != HEARTBEATS for t, _partition in reached):
                # topo copied its topics since the handover: it resumes from its checkpoint.
                # (By its own topics: another topology's flow of the same name shares the log,
                # and every flow from the source copies its heartbeats.)
                continue
            typer.echo(f"Reading where MirrorMaker 2 stopped {spec.flow} ...", err=True)
            found[spec.flow] = mm2_state.handover(
                spec.flow, spec.source, names_of(loaded.topology.edge(spec.flow)),
                configs[spec.source], configs[spec.target], copied[spec.flow],
            )  # fmt: skip
    return found
