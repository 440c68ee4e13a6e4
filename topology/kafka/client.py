"""Settings every confluent_kafka client topo creates shares."""

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from confluent_kafka import KafkaException

from topology.errors import KafkaUnavailableError

# librdkafka logs each refused connection while a broker starts or stops. Those lines would
# interleave with topo's own output, and every failure reaches the caller as an exception.
_LIBRDKAFKA_LOG = logging.getLogger("topology.kafka.librdkafka")
_LIBRDKAFKA_LOG.addHandler(logging.NullHandler())
_LIBRDKAFKA_LOG.propagate = False


def quiet(config: dict[str, str]) -> dict[str, Any]:
    """`config` with librdkafka's log routed away from the terminal."""
    return {**config, "logger": _LIBRDKAFKA_LOG}


@contextlib.contextmanager
def failures_named(config: dict[str, str], doing: str) -> Iterator[None]:
    """Turn the client's exceptions into one line naming the cluster and what failed."""
    try:
        yield
    except KafkaException as problem:
        error = problem.args[0] if problem.args else problem
        reason = error.str() if hasattr(error, "str") else str(error)
        raise KafkaUnavailableError(
            f"{doing} on {config.get('bootstrap.servers', '?')} failed: {reason}"
        ) from None
