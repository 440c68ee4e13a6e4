"""Certificates for TLS lab clusters, made with the machine's `openssl`.

One lab CA (`<lab>/ca/ca.pem`) signs every broker certificate, so a topology trusts all lab
clusters with one `tls: {ca: ...}`. Broker keys are PKCS#8, encrypted with a random password
that only the broker's server.properties (mode 0600) holds: Kafka's PEM key stores require one.
"""

import secrets
import shutil
import subprocess
from pathlib import Path

from topology.core.errors import LabError, ToolMissingError
from topology.lab import state
from topology.lab.spec import HOST, TlsFiles

VALID_DAYS = "825"


def ca_pem() -> Path:
    return state.ca_dir() / "ca.pem"


def broker_files(name: str) -> TlsFiles:
    """The broker's PEM key store and the CA, made on first use and reused after."""
    folder = state.cluster_dir(name) / "tls"
    keystore = folder / "broker-keystore.pem"
    password_file = folder / "key.password"
    if not keystore.exists() or not password_file.exists():
        _make_broker_keystore(name, folder, keystore, password_file)
    return TlsFiles(
        ca_pem=str(ca_pem()),
        keystore_pem=str(keystore),
        key_password=password_file.read_text().strip(),
    )


def user_files(name: str, user: str) -> tuple[Path, Path]:
    """A user's client certificate and unencrypted PKCS#8 key (mode 0600) for a cluster with
    --mtls, signed by the lab CA with subject CN=<user>: Kafka's principal is User:<user>."""
    folder = state.users_dir(name)
    certificate, key = folder / f"{user}.crt", folder / f"{user}.key"
    if certificate.exists() and key.exists():
        return certificate, key
    _ensure_ca()
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    request = folder / f"{user}.csr"
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        f"/CN={user}",
        "-keyout",
        str(key),
        "-out",
        str(request),
    )
    key.chmod(0o600)
    _openssl(
        "x509",
        "-req",
        "-in",
        str(request),
        "-CA",
        str(ca_pem()),
        "-CAkey",
        str(state.ca_dir() / "ca.key"),
        "-CAcreateserial",
        "-days",
        VALID_DAYS,
        "-out",
        str(certificate),
    )
    request.unlink()
    return certificate, key


def _ensure_ca() -> None:
    folder = state.ca_dir()
    if ca_pem().exists() and (folder / "ca.key").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        VALID_DAYS,
        "-subj",
        "/CN=topo lab CA",
        "-keyout",
        str(folder / "ca.key"),
        "-out",
        str(ca_pem()),
    )
    (folder / "ca.key").chmod(0o600)


def _make_broker_keystore(name: str, folder: Path, keystore: Path, password_file: Path) -> None:
    _ensure_ca()
    folder.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(24)
    state.write_private(password_file, password + "\n")
    key, csr, cert = folder / "broker.key", folder / "broker.csr", folder / "broker.crt"
    extensions = folder / "san.cnf"
    extensions.write_text(f"subjectAltName=IP:{HOST},DNS:localhost\n")
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        f"/CN={name}.topo-lab",
        "-keyout",
        str(key),
        "-out",
        str(csr),
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca_pem()),
        "-CAkey",
        str(state.ca_dir() / "ca.key"),
        "-CAcreateserial",
        "-days",
        VALID_DAYS,
        "-extfile",
        str(extensions),
        "-out",
        str(cert),
    )
    encrypted = folder / "broker.p8"
    # The password is read from its 0600 file: a command line is readable by every user.
    _openssl(
        "pkcs8",
        "-topk8",
        "-v1",
        "PBE-SHA1-3DES",
        "-in",
        str(key),
        "-out",
        str(encrypted),
        "-passout",
        f"file:{password_file}",
    )
    pem = encrypted.read_text() + cert.read_text() + ca_pem().read_text()
    state.write_private(keystore, pem)
    for scratch in (key, csr, cert, encrypted, extensions):
        scratch.unlink()


def _openssl(*args: str) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ToolMissingError(
            "openssl is needed to make certificates for --tls but is not on PATH"
        )
    done = subprocess.run([openssl, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise LabError(f"openssl {args[0]} failed while making lab certificates: {last}")
