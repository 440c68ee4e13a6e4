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
from topology.core import copy_slots
from topology.core.errors import KafkaUnavailableError, TopoError
from topology.core.model import Topology
from topology.core.observed import Cluster
from topology.core.plan.values import Plan

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from topology.core.jobs import JobSpec
    from topology.core.mm2.positions import Handover
    from topology.core.model import Edge
    from topology.core.permission_needs import Access, Findings, Missing, Permission
    from topology.core.runstate import Book

OBSERVE_TIMEOUT = 15.0
REFUSAL_TIMEOUT = 10.0  # asking a cluster that refused to be read what topo may do there


@dataclass(frozen=True)
class Loaded:
    file: str
    sha256: str
    topology: Topology


def load(file: str) -> Loaded:
    """The analysed topology; its diagnostics shown, and an error if any is an error."""
    from topology.cli.files import read_text
    from topology.cli.report import show
    from topology.core.analysis import analyse

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
    from topology.cli.files import secret_file_reader
    from topology.core.connection import client_config
    from topology.host import key_stores

    base = Path(loaded.file).parent
    read = secret_file_reader()  # TOPO_SECRET_FILE_ROOTS: the review action's bound
    settings = {
        name: client_config(
            cluster, environ=os.environ, base=base, read_file=read, read_store=key_stores.read
        )
        for name, cluster in loaded.topology.clusters.items()
    }
    return ClientConfigs(settings, loaded.topology)


def observe(configs: dict[str, dict[str, str]]) -> dict[str, Cluster]:
    from topology.kafka import inventory
    from topology.ops import reconcile

    names = ", ".join(sorted(configs))
    typer.echo(f"Reading {len(configs)} cluster(s): {names} ...", err=True)
    started = time.monotonic()
    try:
        clusters = inventory.observe_all(configs, timeout=OBSERVE_TIMEOUT)
    except KafkaUnavailableError as problem:
        if isinstance(configs, ClientConfigs):
            found = reconcile.refusal(configs.topology, str(problem), _Readers(configs))
            if found is not None:
                _report(found)
                raise MissingPermissionsError(_summary(found)) from None
        raise
    topics = sum(len(cluster.topics) for cluster in clusters.values())
    typer.echo(f"Read {topics} topic(s) in {time.monotonic() - started:.1f}s.", err=True)
    return clusters


class _Readers:
    """What `ops.reconcile` reads beyond the inventory, through the Kafka adapter."""

    def __init__(self, configs: ClientConfigs) -> None:
        self.configs = configs
        self.topology = configs.topology

    def principal(self, name: str) -> str | None:
        from topology.core import permission_needs as permissions

        return permissions.principal_matched(self.topology.clusters[name], self.configs[name])

    def progress(self, cluster: str, topic: str, flow: str) -> "Collection[tuple[str, int]]":
        from topology.kafka.offsets import read_progress

        return read_progress(self.configs[cluster], topic, flow).keys()

    def handover(self, spec: "JobSpec", edge: "Edge", topics: "Collection[str]") -> "Handover":
        from topology.core.mm2.positions import names_of
        from topology.kafka import mm2_state

        return mm2_state.handover(
            spec.flow,
            spec.source,
            names_of(edge),
            self.configs[spec.source],
            self.configs[spec.target],
            topics,
        )

    def accesses(
        self, needed: "Sequence[Permission]", clusters: Mapping[str, Cluster]
    ) -> "dict[str, Access]":
        from topology.kafka import permissions as asking

        principals = {name: self.principal(name) for name in self.topology.clusters}
        return asking.ask_all(self.configs, clusters, needed, principals, timeout=OBSERVE_TIMEOUT)

    def reading(self, cluster: str) -> "Access | None":
        from topology.kafka import permissions as asking

        try:
            return asking.ask_for_reading(
                cluster,
                self.configs[cluster],
                principal=self.principal(cluster),
                timeout=REFUSAL_TIMEOUT,
            )
        except TopoError:
            return None


def _report(findings: "Findings") -> None:
    """The findings on stderr: what is missing (errors, then warnings), then notes."""

    def say(line: str) -> None:
        typer.echo(line, err=True)

    if findings.errors:
        say(
            f"topo's principal lacks {len(findings.errors)} permission(s) it needs; nothing was "
            "changed. Grant each with the line under it, as a Kafka administrator (add "
            "--command-config with the administrator's client settings):"
        )
        for missing in findings.errors:
            _show(missing)
    if findings.warnings:
        if findings.errors:
            say("")
        say(
            f"Warning: topo's principal lacks {len(findings.warnings)} permission(s) a later "
            "change will need (until then nothing fails):"
        )
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
    from topology.core.errors import TopicNotFoundError
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
    """The plan (`ops.reconcile.checked_plan`), once the permissions it needs are checked:
    each one missing is listed with its grant and stops here (MissingPermissionsError)."""
    from topology.ops import reconcile

    settings = configs if isinstance(configs, ClientConfigs) else client_configs(loaded)
    assert isinstance(settings, ClientConfigs)
    checked = reconcile.checked_plan(
        loaded.topology,
        loaded.sha256,
        clusters,
        running=running_jobs(loaded),
        read=_Readers(settings),
        allow_delete=allow_delete,
        version=__version__,
        say=lambda line: typer.echo(line, err=True),
        cores=copy_slots.offered(loaded.topology.engine, os.cpu_count() or 1),
    )
    _report(checked.findings)
    if checked.findings.errors:
        raise MissingPermissionsError(_summary(checked.findings))
    return checked.planned.plan
