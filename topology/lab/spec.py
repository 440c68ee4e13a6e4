"""What a lab cluster is: its name, ports, security, and the broker config that follows.

Pure: no files, no processes. `process.py` and `manager.py` act on these values.
"""

import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from topology.core import kerberos
from topology.core.connection import LOGIN_MODULES, jaas_line
from topology.core.errors import LabError

HOST = "127.0.0.1"
ADMIN_USER = "admin"
SCRAM_MECHANISM = "SCRAM-SHA-512"
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
USER_PATTERN = NAME_PATTERN
# The broker's own principal on its internal and controller listeners (SASL PLAIN, loopback).
BROKER_USER = "broker"
RESERVED_USERS = (ADMIN_USER, BROKER_USER)
KERBEROS_MECHANISM = "GSSAPI"
MECHANISMS = (SCRAM_MECHANISM, "PLAIN", "OAUTHBEARER", KERBEROS_MECHANISM)
# The brokers' Kerberos service: their principal is kafka/<host>@<realm>.
KERBEROS_SERVICE = "kafka"
# Certificates name their user in the subject (CN=alice); this makes the principal User:alice.
PRINCIPAL_FROM_CN = "RULE:^CN=([^,]+)$/$1/,DEFAULT"
# Kafka 4's list of the URLs its OAUTHBEARER code may fetch (none by default).
ALLOWED_URLS_PROPERTY = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
OAUTH_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"

# Default client ports are spread over 10000..31990 in steps of 10, below Linux's ephemeral
# range (32768+) so an outgoing connection never holds a lab port by chance.
PORT_BASE = 10_000
PORT_SLOTS = 2_200
PORT_STEP = 10


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise LabError(
            f"lab cluster name {name!r} is not valid: use 1-40 lowercase letters, digits, "
            "'-' or '_', starting with a letter or digit"
        )
    return name


def default_port(name: str) -> int:
    """The client port a cluster gets unless told otherwise: the same for a name, always."""
    return PORT_BASE + (zlib.crc32(name.encode()) % PORT_SLOTS) * PORT_STEP


@dataclass(frozen=True)
class LabCluster:
    """A lab cluster as the user asked for it.

    Ports: `port` for clients, `port + 1` for the KRaft controller and, on a cluster that
    authenticates, `port + 2` for the broker's own traffic and `port + 3` for clients with
    certificates when the client port speaks SASL (`--sasl --mtls`), and `port + 4` for a
    Kerberized cluster's KDC (`--kerberos`).
    """

    name: str
    port: int
    sasl: bool = False
    tls: bool = False
    mtls: bool = False  # clients authenticate with a certificate from the lab CA
    mechanisms: tuple[str, ...] = (SCRAM_MECHANISM,)  # offered on the SASL client listener
    users: tuple[str, ...] = ()  # made by the lab besides `admin`; no ACLs, not super users
    # OAUTHBEARER tokens signed by an OpenID Connect provider, verified with its keys (its
    # JWKS endpoint) and naming their principal in `sub`; Kafka's unsecured tokens without it.
    jwks_url: str | None = None
    # GSSAPI logins checked by a KDC of the cluster's own (port + 4), realm `realm`.
    kerberos: bool = False

    @property
    def controller_port(self) -> int:
        return self.port + 1

    @property
    def internal_port(self) -> int:
        return self.port + 2

    @property
    def mtls_port(self) -> int:
        """Where clients authenticate with a certificate: the client port unless it is SASL."""
        return self.port + 3 if self.sasl else self.port

    @property
    def kdc_port(self) -> int:
        return self.port + 4

    @property
    def realm(self) -> str:
        """The Kerberos realm of the cluster's KDC: its name in capitals, then `.LAB`."""
        return f"{self.name.upper()}.LAB"

    def kerberos_principal(self, user: str) -> str:
        return f"{user}@{self.realm}"

    @property
    def authorizes(self) -> bool:
        """Clients authenticate, and the StandardAuthorizer checks every request's ACLs."""
        return self.sasl or self.mtls

    @property
    def ports(self) -> tuple[int, ...]:
        ports = [self.port, self.controller_port]
        if self.authorizes:
            ports.append(self.internal_port)
        if self.sasl and self.mtls:
            ports.append(self.mtls_port)
        if self.kerberos:
            ports.append(self.kdc_port)
        return tuple(ports)

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def mtls_bootstrap(self) -> str | None:
        return f"{HOST}:{self.mtls_port}" if self.mtls else None

    @property
    def security_protocol(self) -> str:
        if self.sasl and self.tls:
            return "SASL_SSL"
        if self.sasl:
            return "SASL_PLAINTEXT"
        if self.tls:
            return "SSL"
        return "PLAINTEXT"

    @property
    def java_options(self) -> tuple[str, ...]:
        """The broker JVM's system properties: Kafka 4 fetches only the OAuth URLs allowed."""
        if self.jwks_url is None:
            return ()
        return (f"-D{ALLOWED_URLS_PROPERTY}={self.jwks_url}",)

    @property
    def principals(self) -> tuple[str, ...]:
        """Every user of this cluster: the admin first."""
        return (ADMIN_USER, *self.users)


def security_summary(protocol: str, mechanisms: Sequence[str], mtls: str | None) -> str:
    """How clients log in, in words: `SASL_SSL (SCRAM-SHA-512/PLAIN), mTLS on HOST:PORT`."""
    shown = protocol
    if mechanisms:
        shown += f" ({'/'.join(mechanisms)})"
    if mtls:
        shown += f", mTLS on {mtls}"
    return shown


def check_security(cluster: LabCluster) -> LabCluster:
    """The cluster if its security options make sense together, else a LabError."""
    if cluster.mtls and not cluster.tls:
        raise LabError("--mtls needs --tls: client certificates are checked over TLS")
    unknown = [m for m in cluster.mechanisms if m not in MECHANISMS]
    if unknown:
        raise LabError(
            f"SASL mechanism {unknown[0]} is not one the lab offers ({', '.join(MECHANISMS)})"
        )
    if not cluster.mechanisms:
        raise LabError("a SASL lab cluster needs at least one mechanism")
    for user in cluster.users:
        if not USER_PATTERN.fullmatch(user) or user in RESERVED_USERS:
            raise LabError(
                f"lab user name {user!r} is not valid: use 1-40 lowercase letters, digits, "
                f"'-' or '_' (not {' or '.join(RESERVED_USERS)})"
            )
    if cluster.kerberos and KERBEROS_MECHANISM not in cluster.mechanisms:
        raise LabError("--kerberos offers SASL GSSAPI: keep it among the --mechanism given")
    if KERBEROS_MECHANISM in cluster.mechanisms and not cluster.kerberos:
        raise LabError("SASL GSSAPI needs --kerberos: the lab starts the cluster's own KDC")
    if cluster.jwks_url is not None and "OAUTHBEARER" not in cluster.mechanisms:
        raise LabError("--jwks-url needs --mechanism OAUTHBEARER: it verifies OAuth tokens")
    if cluster.jwks_url is not None and not re.fullmatch(r"https?://\S+", cluster.jwks_url):
        raise LabError(f"--jwks-url {cluster.jwks_url!r} is not an http(s) URL")
    if cluster.users and not cluster.authorizes:
        raise LabError("--user needs --sasl or --mtls: a PLAINTEXT or TLS cluster has no users")
    return cluster


@dataclass(frozen=True)
class KerberosFiles:
    """What a Kerberized broker logs in with: its keytab and the principal in it (the
    service `kafka` on the host clients name it by)."""

    keytab: str
    principal: str


@dataclass(frozen=True)
class TlsFiles:
    """PEM files for a TLS listener: the lab CA and this broker's key and certificate chain."""

    ca_pem: str
    keystore_pem: str  # encrypted PKCS#8 private key followed by the certificate chain
    key_password: str


def server_properties(
    cluster: LabCluster,
    data_dir: str,
    passwords: Mapping[str, str] | None = None,
    tls: TlsFiles | None = None,
    kerberos_files: KerberosFiles | None = None,
) -> str:
    """The broker's server.properties: a combined broker+controller node sized for a laptop.

    `passwords` holds the password of every SASL user by name: `admin`, the cluster's users,
    and `broker` (the broker's own login on its internal and controller listeners).
    """
    passwords = passwords or {}
    if cluster.authorizes and BROKER_USER not in passwords:
        raise ValueError("a lab cluster that authenticates needs the broker's password")
    if cluster.sasl and ADMIN_USER not in passwords:
        raise ValueError("a SASL lab cluster needs its admin password")
    if cluster.tls and tls is None:
        raise ValueError("a TLS lab cluster needs its PEM files")
    if cluster.kerberos and kerberos_files is None:
        raise ValueError("a Kerberized lab cluster needs the broker's keytab")
    listeners = {"CLIENT": (cluster.port, cluster.security_protocol)}
    if cluster.authorizes:
        listeners["INTERNAL"] = (cluster.internal_port, "SASL_PLAINTEXT")
    if cluster.sasl and cluster.mtls:
        listeners["MTLS"] = (cluster.mtls_port, "SSL")
    advertised = ",".join(f"{name}://{HOST}:{port}" for name, (port, _) in listeners.items())
    controller = "SASL_PLAINTEXT" if cluster.authorizes else "PLAINTEXT"
    protocols = {name: protocol for name, (_, protocol) in listeners.items()}
    protocols["CONTROLLER"] = controller
    props: dict[str, str] = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@{HOST}:{cluster.controller_port}",
        "listeners": f"{advertised},CONTROLLER://{HOST}:{cluster.controller_port}",
        "advertised.listeners": advertised,
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "INTERNAL" if cluster.authorizes else "CLIENT",
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in protocols.items()),
        "log.dirs": data_dir,
        # One node: every internal topic has one replica; fewer partitions start faster.
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "4",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "4",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "default.replication.factor": "1",
        "num.partitions": "1",
        "group.initial.rebalance.delay.ms": "0",
        # Like most production clusters: topics exist only when someone creates them, so a
        # replication bug that writes to a missing topic fails loudly instead of inventing it.
        "auto.create.topics.enable": "false",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "background.threads": "2",
        "log.cleaner.threads": "1",
        "num.recovery.threads.per.data.dir": "1",
    }
    if cluster.authorizes:
        props |= _authorization(cluster, passwords)
    if cluster.sasl:
        props |= _sasl_client_listener(cluster, passwords, kerberos_files)
    if cluster.tls:
        assert tls is not None
        props |= {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": tls.keystore_pem,
            "ssl.key.password": tls.key_password,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": tls.ca_pem,
            "ssl.client.auth": "none",
            "ssl.endpoint.identification.algorithm": "https",
        }
    if cluster.mtls:
        listener = "mtls" if cluster.sasl else "client"
        props |= {
            f"listener.name.{listener}.ssl.client.auth": "required",
            "ssl.principal.mapping.rules": PRINCIPAL_FROM_CN,
        }
    return "".join(f"{key}={value}\n" for key, value in props.items())


def _authorization(cluster: LabCluster, passwords: Mapping[str, str]) -> dict[str, str]:
    """ACLs enforced for every client; only `admin` and the broker itself are super users.

    The broker talks to itself (transaction markers, say) on the INTERNAL listener and to its
    controller on CONTROLLER, both loopback SASL PLAIN as `broker`: no listener grants
    anything to an unauthenticated (ANONYMOUS) connection.
    """
    password = passwords[BROKER_USER]
    broker = jaas_line(
        LOGIN_MODULES["PLAIN"],
        {"username": BROKER_USER, "password": password, f"user_{BROKER_USER}": password},
    )
    return {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:{ADMIN_USER};User:{BROKER_USER}",
        "allow.everyone.if.no.acl.found": "false",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "sasl.mechanism.controller.protocol": "PLAIN",
        "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.internal.plain.sasl.jaas.config": broker,
        "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.controller.plain.sasl.jaas.config": broker,
    }


def _sasl_client_listener(
    cluster: LabCluster, passwords: Mapping[str, str], kerberos_files: KerberosFiles | None
) -> dict[str, str]:
    props = {"listener.name.client.sasl.enabled.mechanisms": ",".join(cluster.mechanisms)}
    for mechanism in cluster.mechanisms:
        key = f"listener.name.client.{mechanism.lower()}.sasl.jaas.config"
        options: dict[str, str] = {}
        if mechanism == "PLAIN":  # users are listed in the JAAS line: user_<name>="<password>"
            options = {f"user_{user}": passwords[user] for user in cluster.principals}
        elif mechanism == "OAUTHBEARER" and cluster.jwks_url is not None:
            # Signed tokens: the broker checks each one's signature with the provider's keys.
            props |= {
                "listener.name.client.oauthbearer.sasl.server.callback.handler.class": (
                    OAUTH_VALIDATOR
                ),
                "listener.name.client.oauthbearer.sasl.oauthbearer.jwks.endpoint.url": (
                    cluster.jwks_url
                ),
            }
        elif mechanism == KERBEROS_MECHANISM:
            assert kerberos_files is not None
            props["sasl.kerberos.service.name"] = KERBEROS_SERVICE
            options = kerberos.login_options(kerberos_files.keytab, kerberos_files.principal)
            props[key] = jaas_line(kerberos.LOGIN_MODULE, options)
            continue
        elif mechanism == "OAUTHBEARER":
            # Kafka's unsecured JWS tokens (its own test login): the token names the principal
            # and carries no signature. For trying topo and tests only, as the lab is.
            options = {"unsecuredLoginStringClaim_sub": BROKER_USER}
        # SCRAM users live in the cluster metadata; the broker needs no login option for them
        props[key] = jaas_line(LOGIN_MODULES[mechanism], options)
    return props


@dataclass(frozen=True)
class Credentials:
    """How one user reaches a lab cluster: a password (SCRAM, PLAIN), or a certificate."""

    user: str = ADMIN_USER
    password: str | None = None
    ca_pem: str | None = None
    certificate: str | None = None  # PEM file of the user's certificate, for mutual TLS
    key: str | None = None  # its PKCS#8 private key (unencrypted, mode 0600)
    keytab: str | None = None  # the user's Kerberos keys (mode 0600), on a Kerberized cluster


def client_config(
    cluster: LabCluster,
    credentials: Credentials | None = None,
    *,
    mechanism: str | None = None,
    mtls: bool | None = None,
) -> dict[str, str]:
    """librdkafka settings for connecting to a lab cluster as `credentials.user`.

    `mechanism` picks one of the cluster's SASL mechanisms (its first by default); `mtls`
    picks the certificate listener of a cluster that has both (SASL by default).
    """
    who = credentials or Credentials()
    if mtls and not cluster.mtls:
        raise LabError(f"lab cluster {cluster.name} takes no client certificates (no --mtls)")
    if mechanism and not cluster.sasl:
        raise LabError(f"lab cluster {cluster.name} has no SASL login (no --sasl)")
    use_mtls = cluster.mtls and (mtls if mtls is not None else not cluster.sasl)
    if use_mtls:
        if not (who.ca_pem and who.certificate and who.key):
            raise ValueError("a mutual-TLS lab cluster needs the lab CA and a client certificate")
        return {
            "bootstrap.servers": f"{HOST}:{cluster.mtls_port}",
            "security.protocol": "SSL",
            "ssl.ca.location": who.ca_pem,
            "ssl.certificate.location": who.certificate,
            "ssl.key.location": who.key,
        }
    config = {
        "bootstrap.servers": cluster.bootstrap,
        "security.protocol": cluster.security_protocol,
    }
    if cluster.sasl:
        chosen = mechanism or cluster.mechanisms[0]
        if chosen not in cluster.mechanisms:
            offered = ", ".join(cluster.mechanisms)
            raise LabError(f"lab cluster {cluster.name} offers SASL {offered}, not {chosen}")
        config["sasl.mechanism"] = chosen
        if chosen == "OAUTHBEARER" and cluster.jwks_url is not None:
            raise LabError(
                f"lab cluster {cluster.name} takes tokens signed by the OpenID Connect provider "
                f"at {cluster.jwks_url}: log in with sasl.oauthbearer.method oidc and a client "
                "of that provider"
            )
        if chosen == KERBEROS_MECHANISM:
            if not who.keytab:
                raise ValueError("a Kerberized lab cluster needs the user's keytab")
            config |= {
                "sasl.kerberos.principal": cluster.kerberos_principal(who.user),
                "sasl.kerberos.keytab": who.keytab,
                "sasl.kerberos.service.name": KERBEROS_SERVICE,
            }
        elif chosen == "OAUTHBEARER":
            config |= {
                "enable.sasl.oauthbearer.unsecure.jwt": "true",
                "sasl.oauthbearer.config": f"principal={who.user}",
            }
        else:
            if not who.password:
                raise ValueError("a SASL lab cluster needs the user's password")
            config |= {"sasl.username": who.user, "sasl.password": who.password}
    if cluster.tls:
        if not who.ca_pem:
            raise ValueError("a TLS lab cluster needs the lab CA")
        config["ssl.ca.location"] = who.ca_pem
    return config


def broker_client_config(cluster: LabCluster, broker_password: str) -> dict[str, str]:
    """librdkafka settings for the broker's own login (a super user) on its loopback internal
    listener: how the lab makes SCRAM logins before any exists."""
    if not cluster.authorizes:
        raise ValueError(f"lab cluster {cluster.name} has no internal listener")
    return {
        "bootstrap.servers": f"{HOST}:{cluster.internal_port}",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": BROKER_USER,
        "sasl.password": broker_password,
    }


def topology_cluster(
    cluster: LabCluster,
    credentials: Credentials,
    password_file: str | None,
    *,
    mechanism: str | None = None,
    mtls: bool | None = None,
) -> dict[str, Any]:
    """The entry of a topology's `clusters:` that reaches this lab cluster as a user. The
    password is a `${file:...}` reference, never the value."""
    config = client_config(cluster, credentials, mechanism=mechanism, mtls=mtls)
    entry: dict[str, Any] = {"bootstrap": config["bootstrap.servers"]}
    protocol = config["security.protocol"]
    if protocol == "PLAINTEXT":
        return entry
    security: dict[str, Any] = {"protocol": protocol}
    client: dict[str, Any] = {}
    if "sasl.mechanism" in config:
        sasl: dict[str, Any] = {"mechanism": config["sasl.mechanism"]}
        if config["sasl.mechanism"] == KERBEROS_MECHANISM:
            client = {
                key: config[key] for key in ("sasl.kerberos.principal", "sasl.kerberos.keytab")
            }
        elif config["sasl.mechanism"] == "OAUTHBEARER":
            client = {
                "enable.sasl.oauthbearer.unsecure.jwt": True,
                "sasl.oauthbearer.config": config["sasl.oauthbearer.config"],
            }
        else:
            sasl |= {"username": credentials.user, "password": f"${{file:{password_file}}}"}
        security["sasl"] = sasl
    if "ssl.ca.location" in config:
        tls = {"ca": config["ssl.ca.location"]}
        if "ssl.certificate.location" in config:
            tls |= {"cert": config["ssl.certificate.location"], "key": config["ssl.key.location"]}
        security["tls"] = tls
    entry["security"] = security
    if client:
        entry["client"] = client
    return entry
