"""The one way topo builds a SparkSession, so every job runs with the same setup."""

import os
from collections.abc import Callable, Mapping

from pyspark.sql import SparkSession

from topology.spark.conf import BASE_CONF, with_driver_heap, with_slot_plugin
from topology.spark.jars import kafka_connector_jars
from topology.spark.topojar import topo_jar

DEFAULT_MASTER = "local[*]"


def build_session(
    app_name: str = "topo",
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    report: Callable[[str], None] | None = None,
) -> SparkSession:
    """A SparkSession with Kafka's connector and topo's own classes on the classpath as local
    jars, as spark-submit gives the driver (topology/spark/launch.py).

    Settings such as the driver heap take effect only when this starts the JVM, i.e. for the
    first session of a process.
    """
    jars = kafka_connector_jars(report=report)
    jars.append(topo_jar(jars))
    # Spark otherwise binds to the host's first non-loopback address and warns about it;
    # topo's local jobs talk to brokers on this machine or through its routes either way.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName(app_name).master(master or DEFAULT_MASTER)
    jar_list = ",".join(map(str, jars))
    settings = with_slot_plugin(
        with_driver_heap({**BASE_CONF, "spark.jars": jar_list, **(conf or {})})
    )
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
