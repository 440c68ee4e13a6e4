"""JKS and PKCS#12 trust and key stores: read into PEM with the machine's keytool and openssl
(`host/key_stores`), given to both clients in memory (`core/connection`), checked at validate
time (`core/resolve`), and carried in the jobs document as references (`core/model_data`)."""

from pathlib import Path

import pytest

from tests.key_store_files import (
    certificate_and_key,
    certificate_authority,
    key_store,
    trust_store,
)
from topology.core import analysis, model_data
from topology.core.connection import StoreContents, client_config, java_client_config
from topology.host import key_stores

PASSWORD = "store-pass-1234"


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pem")
    ca, ca_key = certificate_authority(folder)
    certificate, key = certificate_and_key(folder, ca, ca_key, "alice")
    return {"ca": ca, "certificate": certificate, "key": key}


def _blocks(path: Path) -> str:
    return "".join(path.read_text().split())


@pytest.mark.parametrize("kind", ["JKS", "PKCS12"])
def test_a_trust_store_is_read_as_its_certificates(
    kind: str, pem: dict[str, Path], tmp_path: Path
) -> None:
    store = trust_store(tmp_path, pem["ca"], kind, PASSWORD)
    for given_type in (kind, None):  # named, or read from the file
        found = key_stores.read(store, given_type, PASSWORD, None, False)
        assert found.key is None and "".join(found.certificates.split()) == _blocks(pem["ca"])


@pytest.mark.parametrize(("kind", "key_password"), [("JKS", "key-pass-5678"), ("PKCS12", None)])
def test_a_key_store_is_read_as_its_chain_leaf_first_and_its_key(
    kind: str, key_password: str | None, pem: dict[str, Path], tmp_path: Path
) -> None:
    store = key_store(
        tmp_path, pem["certificate"], pem["key"], pem["ca"], kind, PASSWORD, key_password
    )
    found = key_stores.read(store, None, PASSWORD, key_password, True)
    assert found.key is not None and "".join(found.key.split()) == _blocks(pem["key"])
    assert "".join(found.certificates.split()) == _blocks(pem["certificate"]) + _blocks(pem["ca"])
    assert not list(Path("/dev/shm").glob("topo-store-*"))  # the PKCS#12 copy is gone


def test_a_store_that_cannot_be_read_is_one_line_without_its_password(
    pem: dict[str, Path], tmp_path: Path
) -> None:
    store = trust_store(tmp_path, pem["ca"], "PKCS12", PASSWORD)
    with pytest.raises(key_stores.KeyStoreError) as wrong:
        key_stores.read(store, None, "not-the-password", None, False)
    said = str(wrong.value)
    assert said.startswith(f"key store {store}: ") and "\n" not in said
    assert "not-the-password" not in said and PASSWORD not in said
    no_store = tmp_path / "ca.jks"
    no_store.write_text("not a store")
    with pytest.raises(key_stores.KeyStoreError, match="neither a JKS nor a PKCS#12"):
        key_stores.read(no_store, None, PASSWORD, None, False)
    trust_only = trust_store(tmp_path, pem["ca"], "JKS", PASSWORD)
    with pytest.raises(key_stores.KeyStoreError, match="holds no private key"):
        key_stores.read(trust_only, None, PASSWORD, None, True)


TOPOLOGY = """version: 1
clusters:
  east:
    bootstrap: "e:9093"
    security:
      protocol: SSL
      tls:
        truststore: {path: stores/trust.jks, password: "${env:TRUST_PASSWORD}"}
        keystore: {path: /etc/kafka/client.p12, password: "${env:KEY_PASSWORD}", type: PKCS12}
  west: {bootstrap: "w:9092"}
flows:
  - mirror: {from: east, to: west}
"""


def test_both_clients_get_the_stores_as_pem_in_memory(tmp_path: Path) -> None:
    topology = analysis.analyse(TOPOLOGY, "t.yaml").topology
    assert topology is not None
    asked: list[tuple[object, ...]] = []

    def read_store(*given: object) -> StoreContents:
        asked.append(given)
        return StoreContents("CHAIN", "KEY" if given[-1] else None)

    environ = {"TRUST_PASSWORD": "t-secret", "KEY_PASSWORD": "k-secret"}
    config = client_config(topology.clusters["east"], environ, read_store=read_store, base=tmp_path)
    assert asked == [
        (tmp_path / "stores/trust.jks", None, "t-secret", None, False),
        (Path("/etc/kafka/client.p12"), "PKCS12", "k-secret", None, True),
    ]
    assert config["ssl.ca.pem"] == "CHAIN" and config["ssl.key.pem"] == "KEY"
    assert config["ssl.certificate.pem"] == "CHAIN" and "ssl.ca.location" not in config
    java = java_client_config(config)
    assert java["ssl.truststore.type"] == java["ssl.keystore.type"] == "PEM"
    assert java["ssl.truststore.certificates"] == java["ssl.keystore.certificate.chain"]
    assert java["ssl.keystore.key"] == "KEY"
    assert not [key for key in java if key.endswith(".pem")]  # librdkafka's names stay out


def test_the_jobs_document_carries_the_stores_with_their_passwords_as_references() -> None:
    topology = analysis.analyse(TOPOLOGY, "t.yaml").topology
    assert topology is not None
    east = topology.clusters["east"]
    data = model_data.cluster_data(east)
    tls = data["security"]["tls"]
    assert tls["truststore"]["password"] == "${env:TRUST_PASSWORD}"
    assert tls["keystore"] == {
        "path": "/etc/kafka/client.p12",
        "password": "${env:KEY_PASSWORD}",
        "type": "PKCS12",
        "key_password": None,
    }
    assert model_data._cluster("east", data).security == east.security


@pytest.mark.parametrize(
    ("tls", "fragment"),
    [
        ("{ca: ca.pem, truststore: {path: t.jks}}", "both say whom to trust"),
        (
            "{cert: c.pem, key: k.pem, keystore: {path: k.p12, password: '${env:P}'}}",
            "leave out tls.cert",
        ),
        ("{keystore: {path: k.p12, password: written-out}}", "written in the file"),
        ("{keystore: {path: k.p12}}", "password"),
        ("{truststore: {path: t.jks, type: JCEKS}}", "JCEKS"),
    ],
)
def test_a_store_is_checked_at_validate_time(tls: str, fragment: str) -> None:
    text = (
        "version: 1\nclusters:\n  east:\n    bootstrap: 'e:1'\n"
        f"    security: {{protocol: SSL, tls: {tls}}}\n"
        "  west: {bootstrap: 'w:1'}\nflows:\n  - mirror: {from: east, to: west}\n"
    )
    found = analysis.analyse(text, "t.yaml").diagnostics
    said = [d for d in found if d.severity == "error" or d.code == "T206"]  # T206 warns
    assert any(fragment in d.message for d in said), [d.message for d in said]
    assert all(d.span.line == 5 for d in said)
