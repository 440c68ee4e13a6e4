"""Where each lab cluster keeps its files, and the record of what was started.

<lab>/<name>/cluster.json        this module's record (name, port, security, pid)
<lab>/<name>/server.properties   the broker config (mode 0600: it may hold a password)
<lab>/<name>/admin.password      the SASL admin password (mode 0600), with --sasl
<lab>/<name>/broker.password     the broker's own login (mode 0600), with --sasl or --mtls
<lab>/<name>/users/              each user's password, or certificate and key (mode 0600)
<lab>/<name>/kerberos/           the cluster's KDC, realm and keytabs, with --kerberos (kdc.py)
<lab>/<name>/data/               the KRaft log dirs
<lab>/<name>/logs/server.log     the broker's log; logs/stdout.log its console
<lab>/ca/ca.pem                  the lab CA, with --tls (one CA for every lab cluster)
"""

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from topology.host import paths
from topology.lab.spec import SCRAM_MECHANISM, LabCluster

RECORD_FILE = "cluster.json"


@dataclass(frozen=True)
class LabRecord:
    cluster: LabCluster
    pid: int | None


def cluster_dir(name: str) -> Path:
    return paths.lab_dir() / name


def data_dir(name: str) -> Path:
    return cluster_dir(name) / "data"


def logs_dir(name: str) -> Path:
    return cluster_dir(name) / "logs"


def server_log(name: str) -> Path:
    return logs_dir(name) / "server.log"


def console_log(name: str) -> Path:
    return logs_dir(name) / "stdout.log"


def password_file(name: str) -> Path:
    return cluster_dir(name) / "admin.password"


def users_dir(name: str) -> Path:
    return cluster_dir(name) / "users"


def user_password_file(name: str, user: str) -> Path:
    """Where a user's SASL password is kept; the admin's is `admin.password`, as before."""
    if user == "admin":
        return password_file(name)
    if user == "broker":
        return cluster_dir(name) / "broker.password"
    return users_dir(name) / f"{user}.password"


def ca_dir() -> Path:
    return paths.lab_dir() / "ca"


def load(name: str) -> LabRecord | None:
    try:
        raw = json.loads((cluster_dir(name) / RECORD_FILE).read_text())
    except FileNotFoundError:
        return None
    cluster = LabCluster(
        name=raw["name"],
        port=raw["port"],
        sasl=raw.get("sasl", False),
        tls=raw.get("tls", False),
        mtls=raw.get("mtls", False),
        mechanisms=tuple(raw.get("mechanisms", [SCRAM_MECHANISM])),
        users=tuple(raw.get("users", [])),
        jwks_url=raw.get("jwks_url"),
        kerberos=raw.get("kerberos", False),
    )
    return LabRecord(cluster=cluster, pid=raw.get("pid"))


def save(record: LabRecord) -> None:
    folder = cluster_dir(record.cluster.name)
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / f".{RECORD_FILE}.tmp"
    scratch.write_text(json.dumps({**asdict(record.cluster), "pid": record.pid}, indent=2) + "\n")
    scratch.replace(folder / RECORD_FILE)


def all_names() -> list[str]:
    root = paths.lab_dir()
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob(f"*/{RECORD_FILE}"))


write_private = paths.write_private
