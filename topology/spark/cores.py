"""The cores Spark offers this driver's copy slots, for `core.copy_slots`: what the topology
and this machine say (`copy_slots.offered`), else, on a cluster whose size the topology does
not state, the cores of the executors that registered (Spark's default parallelism)."""

import os
import time

from pyspark.sql import SparkSession

from topology.core import copy_slots
from topology.core.model import Engine

REGISTER_WAIT = 10.0  # at most this long for a cluster's executors to register
SETTLED = 2.0  # ... and until their count has not changed for this long


def offered(spark: SparkSession, engine: Engine) -> int:
    known = copy_slots.offered(engine, os.cpu_count() or 1)
    if known is not None:
        return known
    context = spark.sparkContext
    start = changed = time.monotonic()
    seen = 0
    while time.monotonic() - start < REGISTER_WAIT:
        now = context._jsc.sc().getExecutorMemoryStatus().size() - 1  # the driver's is there too
        if now != seen:
            seen, changed = now, time.monotonic()
        elif seen > 0 and time.monotonic() - changed >= SETTLED:
            break
        time.sleep(0.25)
    return max(1, context.defaultParallelism)
