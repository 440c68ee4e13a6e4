"""Java key stores (JKS, PKCS#12) read into the PEM text topo's clients are given in memory.

librdkafka reads PEM (and PKCS#12 key stores, but no trust store); Kafka's Java client reads
all three. topo gives both the same PEM (`core.connection`), so the admin plane and the copy
slots trust and present the same certificates. The machine's Java `keytool` reads either kind
of store. A key store's private key leaves it only through a PKCS#12 copy made under a one-time
random password in a private temporary folder (in memory where /dev/shm is), which `openssl`
reads out on its standard output; the folder is removed at once. Nothing is written in clear,
and passwords reach both tools through their environment, never their command line.
"""

import os
import re
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

from topology.core.connection import StoreContents
from topology.core.errors import ToolMissingError, TopoError

_CERTIFICATE = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.DOTALL)
_KEY = re.compile(r"-----BEGIN PRIVATE KEY-----.+?-----END PRIVATE KEY-----", re.DOTALL)
_MAGIC = {b"\xfe\xed\xfe\xed": "JKS"}  # a PKCS#12 file is DER: a SEQUENCE, 0x30


class KeyStoreError(TopoError):
    """A key store that cannot be read (wrong password, not a key store, no key in it)."""


def read(
    path: Path, store_type: str | None, password: str | None, key_password: str | None, key: bool
) -> StoreContents:
    """The store's certificates as PEM (a key store's: its key's chain, leaf first) and, when
    `key`, its private key as unencrypted PKCS#8 PEM."""
    kind = store_type or _kind(path)
    environment = {**os.environ, "TOPO_STORE_PASSWORD": password or ""}
    source = ["-keystore", str(path), "-storetype", kind]
    if password is not None:
        source.append("-storepass:env")
        source.append("TOPO_STORE_PASSWORD")
    listed = _keytool(path, ["-list", "-rfc", *source], environment)
    if not key:
        found = _CERTIFICATE.findall(listed)
        if not found:
            raise KeyStoreError(f"trust store {path} holds no certificate")
        return StoreContents("\n".join(found), None)
    alias, chain = _key_entry(path, listed)
    return StoreContents(chain, _private_key(path, alias, source, environment, key_password))


def _kind(path: Path) -> str:
    try:
        with path.open("rb") as file:
            head = file.read(4)
    except OSError as problem:
        raise KeyStoreError(f"key store {path} cannot be read ({problem.strerror})") from None
    if head in _MAGIC:
        return _MAGIC[head]
    if head[:1] == b"\x30":
        return "PKCS12"
    raise KeyStoreError(f"{path} is neither a JKS nor a PKCS#12 key store")


def _key_entry(path: Path, listed: str) -> tuple[str, str]:
    """The alias of the store's first private key entry and its chain as PEM, leaf first
    (`keytool -list -rfc` lists it in that order)."""
    for entry in listed.split("Alias name: ")[1:]:
        alias, _, rest = entry.partition("\n")
        if "Entry type: PrivateKeyEntry" in rest:
            return alias.strip(), "\n".join(_CERTIFICATE.findall(rest))
    raise KeyStoreError(f"key store {path} holds no private key")


def _private_key(
    path: Path, alias: str, source: list[str], environment: dict[str, str], key_password: str | None
) -> str:
    once = secrets.token_urlsafe(24)
    environment = {**environment, "TOPO_ONCE_PASSWORD": once}
    environment["TOPO_KEY_PASSWORD"] = key_password or environment["TOPO_STORE_PASSWORD"]
    memory = Path("/dev/shm")
    where = str(memory) if memory.is_dir() and os.access(memory, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="topo-store-", dir=where) as folder:  # mode 0700
        copy = Path(folder) / "key.p12"
        arguments = [
            "-importkeystore",
            *(f"-src{word[1:]}" if word.startswith("-") else word for word in source),
            "-srcalias",
            alias,
            "-srckeypass:env",
            "TOPO_KEY_PASSWORD",
            "-destkeystore",
            str(copy),
            "-deststoretype",
            "PKCS12",
            "-deststorepass:env",
            "TOPO_ONCE_PASSWORD",
            "-noprompt",
        ]
        _keytool(path, arguments, environment)
        openssl = shutil.which("openssl")
        if openssl is None:
            raise ToolMissingError("reading a key store's private key needs openssl")
        done = subprocess.run(
            [openssl, "pkcs12", "-in", str(copy), "-nodes", "-passin", "env:TOPO_ONCE_PASSWORD"],
            capture_output=True,
            text=True,
            env=environment,
            check=False,
        )
    found = _KEY.search(done.stdout)
    if done.returncode != 0 or found is None:
        raise KeyStoreError(f"key store {path}: its private key cannot be read with openssl")
    return found.group(0)


def _keytool(path: Path, arguments: list[str], environment: dict[str, str]) -> str:
    keytool = shutil.which("keytool") or _in_java_home()
    if keytool is None:
        raise ToolMissingError(
            "reading a JKS or PKCS#12 key store needs Java's keytool (on PATH or in JAVA_HOME)"
        )
    done = subprocess.run(
        [keytool, *arguments],
        capture_output=True,
        text=True,
        env=environment,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        said = (done.stdout + done.stderr).strip().splitlines()
        reason = next((line for line in said if "keytool error" in line), said[-1] if said else "")
        reason = re.sub(r"^keytool error: (\S+: )?", "", reason)
        raise KeyStoreError(f"key store {path}: {reason or 'keytool failed'}")
    return done.stdout


def _in_java_home() -> str | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home, "bin", "keytool") if home else None
    return str(found) if found is not None and found.exists() else None
