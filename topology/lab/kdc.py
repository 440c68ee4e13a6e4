"""A Kerberized lab cluster's KDC: MIT Kerberos' `krb5kdc` (Debian's krb5-kdc), with its realm's
database, settings and keytabs in the cluster's folder; started before its broker, stopped after.

<lab>/<name>/kerberos/krb5.conf        the realm for clients: KRB5_CONFIG=<this file>
<lab>/<name>/kerberos/kdc.conf         the KDC's own settings
<lab>/<name>/kerberos/principal*       the realm's database, stash its master key (mode 0600)
<lab>/<name>/kerberos/broker.keytab    the broker's keys (kafka/<host>@<realm>)
<lab>/<name>/kerberos/<user>.keytab    each user's keys, admin's too (mode 0600)
<lab>/<name>/kerberos/kdc.log, kdc.pid

Clients name the broker by the host name 127.0.0.1 resolves to (Kafka's Java client looks it
up; librdkafka's Kerberos library does too, as krb5.conf's `rdns` says), so the broker's
principal is `kafka/<that name>`.
"""

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from topology.core.errors import LabError, ToolMissingError
from topology.lab import process, state
from topology.lab.spec import BROKER_USER, HOST, KERBEROS_SERVICE, KerberosFiles, LabCluster

START_TIMEOUT = 10.0
_PACKAGES = (
    "Debian's krb5-kdc, krb5-admin-server and krb5-user (`make kerberos-client` does, as root)"
)


def folder(name: str) -> Path:
    return state.cluster_dir(name) / "kerberos"


def krb5_conf(name: str) -> Path:
    return folder(name) / "krb5.conf"


def keytab(name: str, user: str) -> Path:
    return folder(name) / f"{user}.keytab"


def broker_host() -> str:
    """The name clients give the broker at 127.0.0.1 when they ask for its service ticket."""
    try:
        return socket.gethostbyaddr(HOST)[0]
    except OSError:
        return HOST


def krb5_conf_text(cluster: LabCluster) -> str:
    realm = cluster.realm
    return (
        "[libdefaults]\n"
        f"  default_realm = {realm}\n"
        "  dns_lookup_kdc = false\n"
        "  dns_lookup_realm = false\n"
        # A host's service principal is named after its canonical name, as Java's client does.
        "  dns_canonicalize_hostname = true\n"
        "  rdns = true\n"
        "  udp_preference_limit = 1\n"
        "  ticket_lifetime = 24h\n"
        "  renew_lifetime = 7d\n"
        "[realms]\n"
        f"  {realm} = {{\n    kdc = {HOST}:{cluster.kdc_port}\n  }}\n"
    )


def kdc_conf_text(cluster: LabCluster, where: Path) -> str:
    return (
        "[kdcdefaults]\n"
        f"  kdc_listen = {HOST}:{cluster.kdc_port}\n"
        f"  kdc_tcp_listen = {HOST}:{cluster.kdc_port}\n"
        "[realms]\n"
        f"  {cluster.realm} = {{\n"
        f"    database_name = {where / 'principal'}\n"
        f"    key_stash_file = {where / 'stash'}\n"
        f"    acl_file = {where / 'kadm5.acl'}\n"
        "    max_life = 24h\n"
        "    max_renewable_life = 7d\n"
        "    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n"
        "  }\n"
        "[logging]\n"
        f"  kdc = FILE:{where / 'kdc.log'}\n"
    )


def prepare(cluster: LabCluster) -> KerberosFiles:
    """The realm's settings, database and keytabs (the broker's and every user's), made where
    missing; what the broker logs in with."""
    name = cluster.name
    where = folder(name)
    where.mkdir(parents=True, exist_ok=True)
    where.chmod(0o700)
    state.write_private(krb5_conf(name), krb5_conf_text(cluster))
    state.write_private(where / "kdc.conf", kdc_conf_text(cluster, where))
    if not (where / "principal").exists():
        # The master key's password is on the command line for a moment: the stash (0600)
        # holds the key itself, so the password protects nothing the folder does not.
        _tool("kdb5_util", name, "create", "-s", "-r", cluster.realm, "-P", secrets.token_hex(24))
    broker = f"{KERBEROS_SERVICE}/{broker_host()}@{cluster.realm}"
    # `broker` is no user's name (spec.RESERVED_USERS): its keytab is the broker's alone.
    wanted = {BROKER_USER: broker} | {u: cluster.kerberos_principal(u) for u in cluster.principals}
    for owner, principal in wanted.items():
        path = keytab(name, owner)
        if path.exists():
            continue
        _tool("kadmin.local", name, "-q", f"addprinc -randkey {principal}", check=False)
        _tool("kadmin.local", name, "-q", f'ktadd -k "{path}" {principal}')
        if not path.exists():
            raise LabError(f"the lab KDC of {name} made no keytab for {principal}")
        path.chmod(0o600)
    return KerberosFiles(str(keytab(name, BROKER_USER)), broker)


def start(cluster: LabCluster) -> None:
    """Start the cluster's KDC unless it runs; return once it takes requests."""
    name = cluster.name
    if is_running(name):
        return
    pid_file = folder(name) / "kdc.pid"
    pid_file.unlink(missing_ok=True)
    _tool("krb5kdc", name, "-P", str(pid_file))  # forks into the background once listening
    deadline = time.monotonic() + START_TIMEOUT
    while not (is_running(name) and process.port_in_use(HOST, cluster.kdc_port)):
        if time.monotonic() > deadline:
            raise LabError(f"the lab KDC of {name} did not start (log: {folder(name) / 'kdc.log'})")
        time.sleep(0.05)


def is_running(name: str) -> bool:
    pid = _pid(name)
    if pid is None:
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"krb5kdc" in command and not process.is_zombie(pid)


def stop(name: str) -> None:
    pid = _pid(name)
    if pid is None or not is_running(name):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + START_TIMEOUT
    while is_running(name) and time.monotonic() < deadline:
        time.sleep(0.05)
    if is_running(name):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def client_environment(name: str) -> Iterator[None]:
    """This process's Kerberos library pointed at the lab realm, with a ticket cache of the
    lab's own, while the lab itself logs in (it never touches the user's tickets)."""
    wanted = {
        "KRB5_CONFIG": str(krb5_conf(name)),
        "KRB5CCNAME": f"FILE:{folder(name) / 'lab.ccache'}",
    }
    before = {key: os.environ.get(key) for key in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def java_options(name: str) -> tuple[str, ...]:
    """The broker JVM's: the realm's krb5.conf (the JDK reads no KRB5_CONFIG)."""
    return (f"-Djava.security.krb5.conf={krb5_conf(name)}",)


def _pid(name: str) -> int | None:
    try:
        return int((folder(name) / "kdc.pid").read_text().strip())
    except (OSError, ValueError):
        return None


PROGRAMS = ("kdb5_util", "kadmin.local", "krb5kdc")


def missing() -> str | None:
    """Why this machine cannot run a lab KDC, or None."""
    absent = [program for program in PROGRAMS if find(program) is None]
    if absent:
        return f"`topo lab up --kerberos` needs MIT Kerberos' {', '.join(absent)}: {_PACKAGES}"
    return None


def find(program: str) -> str | None:
    """One of MIT Kerberos' programs: on PATH, or in the sbin folders a user's PATH may lack."""
    return shutil.which(program) or next(
        (str(p) for d in ("/usr/sbin", "/usr/local/sbin") if (p := Path(d) / program).exists()),
        None,
    )


def _tool(program: str, name: str, *args: str, check: bool = True) -> None:
    found = find(program)
    if found is None:
        raise ToolMissingError(
            f"`topo lab up --kerberos` needs MIT Kerberos' {program}: {_PACKAGES}"
        )
    where = folder(name)
    environment = {
        **os.environ,
        "KRB5_CONFIG": str(krb5_conf(name)),
        "KRB5_KDC_PROFILE": str(where / "kdc.conf"),
    }
    done = subprocess.run(
        [found, *args],
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if program != "krb5kdc" else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if program != "krb5kdc" else subprocess.DEVNULL,
        text=True,
        check=False,
    )
    if check and done.returncode != 0:
        shown = (done.stdout or "").strip().splitlines()
        reason = shown[-1] if shown else f"exit status {done.returncode}"
        raise LabError(
            f"the lab KDC of {name}: {program} failed ({reason}; log: {where / 'kdc.log'})"
        )
