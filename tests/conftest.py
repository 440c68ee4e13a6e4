"""Integration tests run against real lab clusters, started once per session in a private lab
folder (so a developer's own `topo lab` clusters are never touched) and stopped at the end."""

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.spark_cluster import StandaloneSpark

# Names no user is likely to have: their default ports differ from east/west/central's.
SOURCE_CLUSTER = "itest-source"
TARGET_CLUSTER = "itest-target"


@pytest.fixture(scope="session")
def lab_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("lab")
    before = os.environ.get("TOPO_LAB_DIR")
    os.environ["TOPO_LAB_DIR"] = str(folder)
    # Replication jobs the tests start keep their state here, never in the user's own folder.
    os.environ["TOPO_STATE_DIR"] = str(tmp_path_factory.mktemp("state"))
    yield folder
    from topology.lab import manager

    _stop_replication(Path(os.environ["TOPO_STATE_DIR"]))
    manager.down([], purge=False)
    if before is None:
        del os.environ["TOPO_LAB_DIR"]
    else:
        os.environ["TOPO_LAB_DIR"] = before


@pytest.fixture(scope="session")
def lab(lab_dir: Path) -> dict[str, dict[str, str]]:
    """Two plaintext lab clusters, started together; their client configs by name."""
    from topology.lab import manager

    manager.up([manager.UpRequest(SOURCE_CLUSTER), manager.UpRequest(TARGET_CLUSTER)])
    return {name: manager.admin_config(name) for name in (SOURCE_CLUSTER, TARGET_CLUSTER)}


@pytest.fixture(scope="session")
def more_clusters(lab: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """Two more lab clusters, for aggregation, two hops and outages; started on first use."""
    from topology.lab import manager

    names = ("itest-region-c", "itest-region-d")
    manager.up([manager.UpRequest(name) for name in names])
    return {name: manager.admin_config(name) for name in names}


@pytest.fixture
def source(lab: dict[str, dict[str, str]]) -> dict[str, str]:
    return lab[SOURCE_CLUSTER]


@pytest.fixture
def target(lab: dict[str, dict[str, str]]) -> dict[str, str]:
    return lab[TARGET_CLUSTER]


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A topic name no other test uses."""
    return f"{request.node.name[:40].replace('[', '-').strip(']')}-{uuid.uuid4().hex[:8]}"


def _stop_replication(state: Path) -> None:
    """Kill every replication driver a test left running, before its clusters go away."""
    import signal

    from topology import jobstate

    for driver_file in state.glob(f"*/{jobstate.DRIVER}"):
        driver = jobstate.running_driver(driver_file.parent.name)
        if driver is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(driver.launcher_pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator["StandaloneSpark"]:
    """One standalone Spark cluster for the run (a master and a worker, 2 cores, 1g)."""
    from tests import spark_cluster as standalone

    cluster = standalone.start(tmp_path_factory.mktemp("spark-cluster"))
    try:
        yield cluster
    finally:
        standalone.stop(cluster)
