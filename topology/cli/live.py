"""What `topo plan` and `topo apply` share: load a topology, observe its clusters, plan.

The edge of the pipeline: it reads the file and the environment (for secret references),
connects to the clusters, and hands plain values to the pure planner. Progress goes to stderr,
so stdout stays for the plan itself.
"""

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from topology import __version__
from topology.errors import TopoError
from topology.model import Topology
from topology.observed import Cluster
from topology.plan.model import Plan

if TYPE_CHECKING:
    from topology.spark.launch import Submission

OBSERVE_TIMEOUT = 15.0


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


def client_configs(loaded: Loaded) -> dict[str, dict[str, str]]:
    """Each cluster's client settings, secrets resolved now (never printed, never planned)."""
    from topology.connection import client_config

    base = Path(loaded.file).parent
    return {
        name: client_config(cluster, environ=os.environ, base=base)
        for name, cluster in loaded.topology.clusters.items()
    }


def observe(configs: dict[str, dict[str, str]]) -> dict[str, Cluster]:
    from topology.kafka import inventory

    names = ", ".join(sorted(configs))
    typer.echo(f"Reading {len(configs)} cluster(s): {names} ...", err=True)
    started = time.monotonic()
    clusters = inventory.observe_all(configs, timeout=OBSERVE_TIMEOUT)
    topics = sum(len(cluster.topics) for cluster in clusters.values())
    typer.echo(f"Read {topics} topic(s) in {time.monotonic() - started:.1f}s.", err=True)
    return clusters


def running_specs(loaded: Loaded) -> dict[str, dict[str, Any]]:
    """The specs of the topology's replication jobs running on this machine now."""
    from topology import jobstate

    driver = jobstate.running_driver(loaded.topology.name)
    return dict(driver.specs) if driver is not None else {}


def make_plan(loaded: Loaded, clusters: dict[str, Cluster], allow_delete: bool) -> Plan:
    from topology.plan import planner

    return planner.plan(
        loaded.topology,
        clusters,
        topology_sha256=loaded.sha256,
        allow_delete=allow_delete,
        topo_version=__version__,
        running=running_specs(loaded),
    )


def submission(loaded: Loaded) -> "Submission":
    """How to run this topology's replication driver (runner, master, Spark settings)."""
    from topology.jobs import specs_of
    from topology.spark.launch import Submission

    engine = loaded.topology.engine
    return Submission(
        owner=loaded.topology.name,
        topology_file=str(Path(loaded.file).resolve()),
        topology_sha256=loaded.sha256,
        runner=engine.runner,
        master=engine.master,
        spark_conf=dict(engine.spark_conf),
        specs=tuple(specs_of(loaded.topology)),
    )
