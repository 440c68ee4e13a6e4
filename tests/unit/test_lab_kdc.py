"""The lab's KDC with MIT Kerberos' own programs (no Kafka): a realm made, keytabs that log in
with `kinit`, the broker's keys apart from every user's, and the KDC stopped again."""

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import NEED_KERBEROS
from topology.lab import kdc
from topology.lab.spec import LabCluster


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LabCluster]:
    problem = kdc.missing() or (None if kdc.find("kinit") else "no kinit (krb5-user)")
    if problem:
        if os.environ.get(NEED_KERBEROS):
            pytest.fail(problem)
        pytest.skip(problem)
    monkeypatch.setenv("TOPO_LAB_DIR", str(tmp_path / "lab with space"))
    with socket.socket() as probe:  # a free port for the KDC: the cluster's port + 4
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # `kafka` as a user: the broker's principal is the service kafka/<host>, in a keytab of
    # its own, never the user's.
    made = LabCluster(
        "kdc-test", port - 4, sasl=True, mechanisms=("GSSAPI",), users=("kafka",), kerberos=True
    )
    yield made
    kdc.stop(made.name)


def _principals(keytab: Path) -> set[str]:
    shown = subprocess.run(
        [str(kdc.find("klist")), "-k", str(keytab)], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[-1] for line in shown.splitlines() if line.strip()[:1].isdigit()}


def test_the_lab_kdc_makes_a_realm_whose_keytabs_log_in_and_stops(
    cluster: LabCluster, tmp_path: Path
) -> None:
    files = kdc.prepare(cluster)
    broker, user = Path(files.keytab), kdc.keytab(cluster.name, "kafka")
    assert files.principal == f"kafka/{kdc.broker_host()}@KDC-TEST.LAB"
    assert _principals(broker) == {files.principal}
    assert _principals(user) == {"kafka@KDC-TEST.LAB"}
    assert _principals(kdc.keytab(cluster.name, "admin")) == {"admin@KDC-TEST.LAB"}
    assert {oct(p.stat().st_mode & 0o777) for p in (broker, user)} == {"0o600"}
    assert oct(kdc.folder(cluster.name).stat().st_mode & 0o777) == "0o700"
    assert kdc.prepare(cluster) == files  # again: nothing re-keyed, the same files

    kdc.start(cluster)
    assert kdc.is_running(cluster.name)
    environment = {
        **os.environ,
        "KRB5_CONFIG": str(kdc.krb5_conf(cluster.name)),
        "KRB5CCNAME": f"FILE:{tmp_path / 'cache'}",
    }
    login = subprocess.run(
        [str(kdc.find("kinit")), "-k", "-t", str(user), "kafka@KDC-TEST.LAB"],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert login.returncode == 0, login.stderr
    kdc.stop(cluster.name)
    assert not kdc.is_running(cluster.name)


def test_the_lab_logs_in_with_the_realm_only_while_it_needs_to(
    cluster: LabCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KRB5CCNAME", "FILE:/users/own/cache")
    monkeypatch.delenv("KRB5_CONFIG", raising=False)
    with kdc.client_environment(cluster.name):
        assert os.environ["KRB5_CONFIG"] == str(kdc.krb5_conf(cluster.name))
        assert os.environ["KRB5CCNAME"] != "FILE:/users/own/cache"
    assert os.environ["KRB5CCNAME"] == "FILE:/users/own/cache"
    assert "KRB5_CONFIG" not in os.environ
