"""What a lab cluster is: its name, ports, security, and the broker config that follows.

Pure: no files, no processes. `process.py` and `manager.py` act on these values.
"""

import re
import zlib
from dataclasses import dataclass

from topology.errors import LabError

HOST = "127.0.0.1"
ADMIN_USER = "admin"
SCRAM_MECHANISM = "SCRAM-SHA-512"
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")

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
    """A lab cluster as the user asked for it. The controller listens on `port + 1`."""

    name: str
    port: int
    sasl: bool = False
    tls: bool = False

    @property
    def controller_port(self) -> int:
        return self.port + 1

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def security_protocol(self) -> str:
        if self.sasl and self.tls:
            return "SASL_SSL"
        if self.sasl:
            return "SASL_PLAINTEXT"
        if self.tls:
            return "SSL"
        return "PLAINTEXT"


@dataclass(frozen=True)
class TlsFiles:
    """PEM files for a TLS listener: the lab CA and this broker's key and certificate chain."""

    ca_pem: str
    keystore_pem: str  # encrypted PKCS#8 private key followed by the certificate chain
    key_password: str


def server_properties(
    cluster: LabCluster,
    data_dir: str,
    admin_password: str | None = None,
    tls: TlsFiles | None = None,
) -> str:
    """The broker's server.properties: a combined broker+controller node sized for a laptop."""
    if cluster.sasl and not admin_password:
        raise ValueError("a SASL lab cluster needs its admin password")
    if cluster.tls and tls is None:
        raise ValueError("a TLS lab cluster needs its PEM files")
    props: dict[str, str] = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@{HOST}:{cluster.controller_port}",
        "listeners": f"CLIENT://{HOST}:{cluster.port},CONTROLLER://{HOST}:{cluster.controller_port}",
        "advertised.listeners": f"CLIENT://{cluster.bootstrap}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "CLIENT",
        "listener.security.protocol.map": (
            f"CLIENT:{cluster.security_protocol},CONTROLLER:PLAINTEXT"
        ),
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
    if cluster.sasl:
        assert admin_password is not None
        jaas = (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{ADMIN_USER}" password="{admin_password}";'
        )
        props |= {
            "sasl.enabled.mechanisms": SCRAM_MECHANISM,
            "sasl.mechanism.inter.broker.protocol": SCRAM_MECHANISM,
            f"listener.name.client.{SCRAM_MECHANISM.lower()}.sasl.jaas.config": jaas,
            # An authorizer, so ACLs are enforced and ACL sync can be tested for real. The
            # controller listener is loopback-only PLAINTEXT; its ANONYMOUS principal is the
            # broker itself registering with its own controller.
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": f"User:{ADMIN_USER};User:ANONYMOUS",
            "allow.everyone.if.no.acl.found": "false",
        }
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
    return "".join(f"{key}={value}\n" for key, value in props.items())


def client_config(
    cluster: LabCluster, admin_password: str | None = None, ca_pem: str | None = None
) -> dict[str, str]:
    """librdkafka settings for connecting to a lab cluster as its admin."""
    config = {
        "bootstrap.servers": cluster.bootstrap,
        "security.protocol": cluster.security_protocol,
    }
    if cluster.sasl:
        if not admin_password:
            raise ValueError("a SASL lab cluster needs its admin password")
        config |= {
            "sasl.mechanism": SCRAM_MECHANISM,
            "sasl.username": ADMIN_USER,
            "sasl.password": admin_password,
        }
    if cluster.tls:
        if not ca_pem:
            raise ValueError("a TLS lab cluster needs the lab CA")
        config["ssl.ca.location"] = ca_pem
    return config
