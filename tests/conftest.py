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
    from tests.oidc_provider import Running
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


class SecuredLab:
    """Two lab clusters that authenticate every client and authorize every request, as
    production clusters do: SASL_SSL (SCRAM-SHA-512, PLAIN, OAUTHBEARER) on the client port,
    mutual TLS on PORT+3, StandardAuthorizer with only `admin` (and the broker) super users.
    Users without any ACL: `topo` and `app`. The source's OAUTHBEARER takes Kafka's unsecured
    tokens; the target's only tokens signed by the session's OpenID Connect provider (`oidc`),
    whose clients are the same users."""

    source = "itest-secure-a"
    target = "itest-secure-b"
    users = ("topo", "app")
    mechanisms = ("SCRAM-SHA-512", "OAUTHBEARER", "PLAIN")

    def __init__(self, oidc: "Running") -> None:
        self.oidc = oidc

    def admin_config(self, name: str) -> dict[str, str]:
        from topology.lab import manager

        return manager.admin_config(name)

    def user_config(
        self, name: str, user: str, *, mechanism: str | None = None, mtls: bool | None = None
    ) -> dict[str, str]:
        from topology.lab import manager

        return manager.user_config(name, user, mechanism=mechanism, mtls=mtls)

    def entry(
        self, name: str, user: str = "admin", *, mechanism: str | None = None, mtls: bool = False
    ) -> dict[str, object]:
        """The topology's `clusters.<alias>` for reaching `name` as `user`."""
        from topology.lab import manager

        return manager.topology_entry(name, user, mechanism=mechanism, mtls=mtls or None)

    def bootstrap(self, name: str) -> str:
        return self.admin_config(name)["bootstrap.servers"]

    def secrets(self) -> list[str]:
        """Every password and private key of both clusters: none may appear outside them."""
        from topology.lab import state

        found = []
        for name in (self.source, self.target):
            for path in (state.cluster_dir(name)).rglob("*"):
                if path.suffix in (".password", ".key"):
                    found += _secret_parts(path.read_text())
        return found + list(self.oidc.provider.clients.values())


def _secret_parts(text: str) -> list[str]:
    """A password whole; a PEM key as each of its base64 lines (any one would leak it)."""
    lines = [line for line in text.strip().splitlines() if not line.startswith("-----")]
    return [line for line in lines if len(line) >= 16]


@pytest.fixture(scope="session")
def oidc() -> "Iterator[Running]":
    """An OpenID Connect provider for the session: client credentials in, signed tokens out."""
    from tests.oidc_provider import running

    clients = {user: f"oidc-{user}-" + os.urandom(12).hex() for user in ("admin", "topo", "app")}
    with running(clients) as provider:
        yield provider


@pytest.fixture(scope="session")
def secured_lab(lab_dir: Path, oidc: "Running") -> SecuredLab:
    """The secured pair, started together on first use and shared by the session's tests."""
    from topology.lab import manager

    secured = SecuredLab(oidc)
    manager.up(
        [
            manager.UpRequest(
                name,
                sasl=True,
                tls=True,
                mtls=True,
                mechanisms=secured.mechanisms,
                users=secured.users,
                # The broker fetches the provider's keys as it starts: the provider runs first.
                jwks_url=oidc.jwks_url if name == secured.target else None,
            )
            for name in (secured.source, secured.target)
        ]
    )
    return secured


KERBEROS_CLUSTER = "itest-kerberos"
# Set by .ci/run: without a Kerberos client (`make kerberos-client`) the Kerberos tests fail
# rather than skip.
NEED_KERBEROS = "TOPO_TESTS_NEED_KERBEROS"


def _kerberos_missing() -> str | None:
    """Why this machine cannot run the Kerberos tests, or None."""
    from topology.kafka.client import has_gssapi
    from topology.lab import kdc

    if not has_gssapi():
        return "confluent-kafka here has no GSSAPI: `make kerberos-client` builds one"
    return kdc.missing()


@pytest.fixture(scope="session")
def kerberos_cluster(lab_dir: Path) -> Iterator[str]:
    """A Kerberized lab cluster (SASL_PLAINTEXT with GSSAPI, its own KDC, StandardAuthorizer;
    users admin and topo, each with a keytab), started on first use. This process, and the topo
    commands and drivers it starts, use its realm's krb5.conf and the lab's ticket cache, as a
    user of a Kerberized cluster sets KRB5_CONFIG and KRB5CCNAME."""
    from topology.lab import kdc, manager

    missing = _kerberos_missing()
    if missing:
        if os.environ.get(NEED_KERBEROS):
            pytest.fail(missing)
        pytest.skip(missing)
    manager.up(
        [
            manager.UpRequest(
                KERBEROS_CLUSTER, sasl=True, mechanisms=("GSSAPI",), users=("topo",), kerberos=True
            )
        ]
    )
    with kdc.client_environment(KERBEROS_CLUSTER):
        yield KERBEROS_CLUSTER


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

    from topology.host import jobstate

    for driver_file in state.glob(f"*/{jobstate.DRIVER}"):
        driver = jobstate.driver_in(driver_file)  # this folder's, whatever TOPO_STATE_DIR says
        if driver is None:
            continue
        for group in (driver.launcher_pid, driver.submit_pid):  # `topo run`, then spark-submit
            if group is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, signal.SIGKILL)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator["StandaloneSpark"]:
    """One standalone Spark cluster for the run: a master and two workers of 4 cores and 1g
    each (a copy slot holds a core while it runs; the cores are the machine's two, shared)."""
    from tests import spark_cluster as standalone

    cluster = standalone.start(tmp_path_factory.mktemp("spark-cluster"), cores=4, workers=2)
    try:
        yield cluster
    finally:
        standalone.stop(cluster)
