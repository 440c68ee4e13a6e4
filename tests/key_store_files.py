"""JKS and PKCS#12 stores made from PEM files with the machine's openssl and keytool, as an
enterprise's `mm2.properties` would name them: a trust store of a CA, and a key store of a
client certificate, its key and the CA (its chain)."""

import os
import subprocess
from pathlib import Path


def _run(*command: str, passwords: dict[str, str]) -> None:
    subprocess.run(
        command, check=True, capture_output=True, env={**os.environ, **passwords}, timeout=60
    )


def trust_store(folder: Path, ca_pem: Path, kind: str, password: str) -> Path:
    """A trust store holding `ca_pem`'s certificate."""
    store = folder / f"truststore.{'jks' if kind == 'JKS' else 'p12'}"
    store.unlink(missing_ok=True)
    _run(
        "keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_pem),
        "-keystore", str(store), "-storetype", kind, "-storepass:env", "P",
        passwords={"P": password},
    )  # fmt: skip
    return store


def key_store(
    folder: Path,
    certificate: Path,
    key: Path,
    ca_pem: Path,
    kind: str,
    password: str,
    key_password: str | None = None,
) -> Path:
    """A key store of the certificate and key, with the CA as the rest of its chain; a JKS
    one's key under `key_password` when given (PKCS#12 keeps one password)."""
    p12 = folder / "keystore.p12"
    p12.unlink(missing_ok=True)
    _run(
        "openssl", "pkcs12", "-export", "-in", str(certificate), "-inkey", str(key),
        "-certfile", str(ca_pem), "-name", "client", "-out", str(p12), "-passout", "env:P",
        passwords={"P": password},
    )  # fmt: skip
    if kind == "PKCS12":
        return p12
    jks = folder / "keystore.jks"
    jks.unlink(missing_ok=True)
    _run(
        "keytool", "-importkeystore", "-noprompt", "-srckeystore", str(p12),
        "-srcstoretype", "PKCS12", "-srcstorepass:env", "P", "-destkeystore", str(jks),
        "-deststoretype", "JKS", "-deststorepass:env", "P", "-destkeypass:env", "K",
        passwords={"P": password, "K": key_password or password},
    )  # fmt: skip
    p12.unlink()
    return jks


def certificate_and_key(
    folder: Path, ca_pem: Path, ca_key: Path, subject: str
) -> tuple[Path, Path]:
    """A certificate for CN=`subject` signed by the CA, and its unencrypted PKCS#8 key."""
    key, request, certificate = (folder / f"{subject}.{s}" for s in ("key", "csr", "crt"))
    _run(
        "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={subject}",
        "-keyout", str(key), "-out", str(request),
        passwords={},
    )  # fmt: skip
    _run(
        "openssl", "x509", "-req", "-in", str(request), "-CA", str(ca_pem), "-CAkey",
        str(ca_key), "-CAcreateserial", "-out", str(certificate), "-days", "2",
        passwords={},
    )  # fmt: skip
    return certificate, key


def certificate_authority(folder: Path) -> tuple[Path, Path]:
    """A self-signed CA: its certificate and key."""
    pem, key = folder / "ca.pem", folder / "ca.key"
    _run(
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=test-ca",
        "-keyout", str(key), "-out", str(pem), "-days", "2",
        passwords={},
    )  # fmt: skip
    return pem, key
