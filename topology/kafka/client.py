"""Settings every confluent_kafka client topo creates shares."""

import logging
from typing import Any

# librdkafka logs each refused connection while a broker starts or stops. Those lines would
# interleave with topo's own output, and every failure reaches the caller as an exception.
_LIBRDKAFKA_LOG = logging.getLogger("topology.kafka.librdkafka")
_LIBRDKAFKA_LOG.addHandler(logging.NullHandler())
_LIBRDKAFKA_LOG.propagate = False


def quiet(config: dict[str, str]) -> dict[str, Any]:
    """`config` with librdkafka's log routed away from the terminal."""
    return {**config, "logger": _LIBRDKAFKA_LOG}
