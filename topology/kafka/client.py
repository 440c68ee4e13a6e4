"""Settings every confluent_kafka client topo creates shares."""

import contextlib
import functools
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from topology.core import connection, kerberos
from topology.core.errors import KafkaUnavailableError, TopoError
from topology.kafka import msk_iam_tokens

# librdkafka logs each refused connection while a broker starts or stops. Those lines would
# interleave with topo's own output, and every failure reaches the caller as an exception.
_LIBRDKAFKA_LOG = logging.getLogger("topology.kafka.librdkafka")
_LIBRDKAFKA_LOG.addHandler(logging.NullHandler())
_LIBRDKAFKA_LOG.propagate = False


class LastError(logging.Handler):
    """Keeps the client's last error-level log line (authentication, TLS, refused connection),
    which says why a call failed more precisely than the call's own "transport failure"."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.reason: str | None = None
        # Not registered with logging's manager, so it is freed with its client.
        self.logger = logging.Logger("topology.kafka.librdkafka.client")
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        # "FAIL [rdkafka#consumer-4] [thrd:..]: sasl_plaintext://host:port/bootstrap: <reason>"
        detail = record.getMessage().split("]: ", 1)[-1].split(": ", 1)[-1]
        self.reason = re.sub(r" \(after \d+ms in state \w+\)$", "", detail)


# For a consumer that reads partitions to their end and is closed: the broker answers a fetch
# at a partition's end at once (librdkafka waits up to 500 ms for more by default), and the
# consumer fetches again at once once its queue is served (by default it backs off 1 s). Never
# for a consumer left assigned while idle: it would fetch a hundred times a second.
READ_TO_END = {"enable.partition.eof": True, "fetch.wait.max.ms": 10, "fetch.queue.backoff.ms": 10}


# A partition's leader is moving, or not ready yet: a topic just created (a broker shows it in
# its metadata a moment before it leads its partitions, and the client's metadata may not
# hold it yet: the local _UNKNOWN_* codes), a broker restarting. Asked again.
LEADER_MOVING = frozenset(
    {
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError._UNKNOWN_TOPIC,
        KafkaError._UNKNOWN_PARTITION,
    }
)


def unknown_topic(problem: KafkaException) -> bool:
    """Whether a request failed because its topic or partition does not exist."""
    error = problem.args[0] if problem.args else None
    return isinstance(error, KafkaError) and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def quiet(
    config: dict[str, str], last_error: LastError | None = None, *, admin: bool = False
) -> dict[str, Any]:
    """One client's settings from its cluster's `config` (an admin client's with the cluster's
    `admin:` settings: `connection.for_client`), with librdkafka's log routed away from the
    terminal (or into `last_error`)."""
    if config.get("sasl.mechanism") == kerberos.MECHANISM:
        _check_kerberos(config)
    return {
        **msk_iam_tokens.with_token_callback(connection.for_client(config, admin=admin)),
        "logger": last_error.logger if last_error else _LIBRDKAFKA_LOG,
    }


def _check_kerberos(config: dict[str, str]) -> None:
    """What would make every Kerberos login of this cluster fail, said once, before a client
    runs `kinit` (whose own complaints are its, on the terminal)."""
    cluster = config.get("bootstrap.servers", "?")
    require_gssapi(f"cluster {cluster}")
    keytab = Path(config.get(kerberos.KEYTAB, ""))
    if not keytab.is_file() or not os.access(keytab, os.R_OK):
        raise TopoError(
            f"cluster {cluster}: the Kerberos keytab {keytab} "
            f"{'cannot be read by this user' if keytab.is_file() else 'does not exist'} "
            f"({kerberos.KEYTAB})"
        )


def require_gssapi(who: str) -> None:
    """A TopoError naming the rebuild unless this librdkafka can log in with Kerberos."""
    if not has_gssapi():
        raise TopoError(
            f"{who} logs in with Kerberos (GSSAPI), which this confluent-kafka's librdkafka "
            "was built without (the PyPI wheel's is): rebuild it with deploy/kerberos-client.sh "
            "on topo's virtualenv, `make kerberos-client` (docs/secured-clusters.md, Which "
            "client speaks Kerberos)"
        )


@functools.cache
def has_gssapi() -> bool:
    """Whether this librdkafka can log in with Kerberos (the confluent-kafka wheel's cannot)."""
    try:
        Producer(
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": kerberos.MECHANISM,
                "sasl.kerberos.principal": "topo",
                "sasl.kerberos.keytab": "/dev/null",
                "sasl.kerberos.kinit.cmd": "true",  # asks the KDC nothing
                "logger": _LIBRDKAFKA_LOG,  # "no bootstrap.servers": it connects nowhere
            }
        )
    except KafkaException as problem:
        return "GSSAPI" not in str(problem)
    return True


@contextlib.contextmanager
def failures_named(
    config: dict[str, str], doing: str, logged: tuple[LastError, Any] | None = None
) -> Iterator[None]:
    """Turn the client's exceptions into one line naming the cluster and what failed.

    `logged` is the client's LastError and the client itself: its queued log lines are served
    (by polling it) so the line can give the underlying cause.
    """
    try:
        yield
    except (KafkaException, TimeoutError) as problem:  # TimeoutError: a future got no answer
        reason = _reason(problem)
        if logged is not None:
            last_error, kafka_client = logged
            kafka_client.poll(0)
            reason = last_error.reason or reason
        raise KafkaUnavailableError(
            f"{doing} on {config.get('bootstrap.servers', '?')} failed: {reason}"
        ) from None


def _reason(problem: Exception) -> str:
    if isinstance(problem, TimeoutError):
        return "no answer in time"
    error = problem.args[0] if problem.args else problem
    return error.str() if isinstance(error, KafkaError) else str(error)
