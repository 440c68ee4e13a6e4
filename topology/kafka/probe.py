"""Prove a cluster works end to end: create a topic, produce a record, consume it back."""

import time
import uuid
from collections.abc import Callable, Mapping

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._scram import (
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialAlteration,
    UserScramCredentialUpsertion,
)

from topology.core.errors import KafkaUnavailableError
from topology.kafka import client, records

# Starts with "__", so topo's default excludes and MM2's internal-topic rule both skip it.
PROBE_TOPIC = "__topo-lab-probe"


def round_trip(config: dict[str, str], timeout: float = 30.0) -> None:
    """Return once a record written to `config`'s cluster has been read back, else raise."""
    deadline = time.monotonic() + timeout
    quiet = client.quiet(config)
    records.create_topic(config, PROBE_TOPIC, 1, timeout=max(1.0, timeout / 3), exist_ok=True)
    marker = uuid.uuid4().hex.encode()
    producer = Producer({**quiet, "acks": "all", "message.timeout.ms": str(int(timeout * 1000))})
    delivered: list[KafkaError | None] = []
    producer.produce(PROBE_TOPIC, value=marker, on_delivery=lambda err, _msg: delivered.append(err))
    producer.flush(max(0.1, deadline - time.monotonic()))
    if not delivered or delivered[0] is not None:
        reason = delivered[0] if delivered else "timed out"
        raise KafkaUnavailableError(
            f"{config['bootstrap.servers']} did not accept a record: {reason}"
        )
    group = f"topo-lab-probe-{marker.decode()}"
    consumer = Consumer(
        {**quiet, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    try:
        consumer.subscribe([PROBE_TOPIC])
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None and message.value() == marker:
                return
    finally:
        consumer.close()
    raise KafkaUnavailableError(f"{config['bootstrap.servers']} did not return the probe record")


def wait_until_serving(
    config: dict[str, str], timeout: float, still_starting: Callable[[], bool]
) -> None:
    """Probe until it succeeds or `timeout` passes; `still_starting()` false aborts early."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not still_starting():
            raise KafkaUnavailableError("the broker process exited while starting")
        try:
            round_trip(config, timeout=min(10.0, max(1.0, deadline - time.monotonic())))
            return
        except (KafkaUnavailableError, KafkaException) as problem:
            last = problem
            time.sleep(0.5)
    raise KafkaUnavailableError(f"not serving after {timeout:.0f}s ({last})")


def upsert_scram_users(
    config: dict[str, str], passwords: Mapping[str, str], mechanism: str, timeout: float = 30.0
) -> None:
    """Create or reset SCRAM logins (user -> password) as the cluster's admin."""
    kind = ScramMechanism[mechanism.replace("-", "_")]
    admin = AdminClient(client.quiet(config, admin=True))
    alterations: list[UserScramCredentialAlteration] = [
        UserScramCredentialUpsertion(user, ScramCredentialInfo(kind, 8192), password.encode())
        for user, password in passwords.items()
    ]
    for user, future in admin.alter_user_scram_credentials(alterations).items():
        with client.failures_named(config, f"making SCRAM user {user}"):
            future.result(timeout)
