"""MM2's checkpoints topic under another separator, read through MM2's own client.

MM2's DefaultReplicationPolicy names its checkpoints topic `<source><sep>checkpoints<sep>
internal` (the internal separator on, its default), or `<source>.checkpoints.internal` with
`replication.policy.internal.topic.separator.enabled=false`; `RemoteClusterUtils` looks
there and nowhere else. topo once wrote `primary__checkpoints.internal` under `__`, where
MM2's tools never found its checkpoints.

MM2's classes are called in a JVM of their own over py4j (pyspark's bridge), with
connect-mirror-client's jars at the lab's Kafka version: the policy and the client configured
exactly as a user of MM2 configures them, from the same properties.
"""

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import run_topo
from tests.integration.test_offsets import consume_part
from tests.integration.test_replication import Topology, varied
from topology.core import naming
from topology.kafka import records
from topology.spark.topojar import jdk_tool

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def mm2_jvm() -> Iterator[Any]:
    """A JVM with MM2's jars, driven from Python (py4j), stopped with the module."""
    from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

    from topology.host import maven

    classpath = os.pathsep.join(str(jar) for jar in maven.resolve("mirror-maker"))
    port = launch_gateway(classpath=classpath, die_on_exit=True, java_path=jdk_tool("java"))
    gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))
    yield gateway.jvm
    gateway.shutdown()


@pytest.fixture
def topology(tmp_path: Path, lab: dict[str, dict[str, str]]) -> Iterator[Topology]:
    made = Topology(tmp_path, {"src": lab[SOURCE_CLUSTER], "dst": lab[TARGET_CLUSTER]})
    yield made
    made.stop()


@pytest.mark.parametrize("internal_separator", [True, False])
def test_mm2s_client_finds_the_checkpoints_under_the_separator_it_is_given(
    topology: Topology, mm2_jvm: Any, internal_separator: bool
) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("sep")
    records.create_topic(src, topic, 2)
    records.produce(src, varied(topic, 10, partitions=2))
    group = f"{topology.prefix}-sep"
    consume_part(src, group, topic, {0: 3, 1: 2})
    flag = "true" if internal_separator else "false"
    topology.write(
        "  - mirror: {from: src, to: dst}",
        f'  separator: "__"\n  internal_separator: {flag}',
    )
    topology.apply("--once")
    shown = run_topo("offsets", str(topology.file), "--group", group, "--json")
    assert shown.returncode == 0, shown.stderr
    [move] = [m for m in json.loads(shown.stdout)["groups"] if m["from"] == "src"]
    topo_shows = {
        (r["destination_topic"], r["partition"]): r["position"] for r in move["partitions"]
    }
    assert set(topo_shows) == {(f"src__{topic}", 0), (f"src__{topic}", 1)}

    # MM2's properties for the same policy, as a user of MM2 writes them.
    props = mm2_jvm.java.util.HashMap()
    props.put("bootstrap.servers", dst["bootstrap.servers"])
    props.put("replication.policy.separator", "__")
    props.put("replication.policy.internal.topic.separator.enabled", flag)
    policy = mm2_jvm.org.apache.kafka.connect.mirror.DefaultReplicationPolicy()
    policy.configure(props)
    expected = "src__checkpoints__internal" if internal_separator else "src.checkpoints.internal"
    assert policy.checkpointsTopic("src") == expected
    assert naming.checkpoints_topic("src", "__", internal_separator) == expected
    # topo's own topics on dst, never copied by topo (MM2's default topics.exclude,
    # `.*[-.]internal`, skips them too; its isInternalTopic under `__` does not, found here).
    on_dst = AdminClient(dict(dst)).list_topics(timeout=30).topics
    for name in (
        naming.topo_checkpoints_topic("src", "__"),
        naming.offset_syncs_topic("src", "__"),
    ):
        assert name in on_dst
        assert naming.is_internal(name, "__"), name

    # RemoteClusterUtils reads the checkpoints where the policy says, and translates the group
    # to what `topo offsets` shows.
    utils = mm2_jvm.org.apache.kafka.connect.mirror.RemoteClusterUtils
    duration = mm2_jvm.java.time.Duration.ofSeconds(30)
    translated = utils.translateOffsets(props, "src", group, duration)
    theirs = {
        (entry.getKey().topic(), entry.getKey().partition()): entry.getValue().offset()
        for entry in translated.entrySet()
    }
    assert theirs == topo_shows
    # MirrorClient lists the checkpoints topic as MM2's own tools do.
    client = mm2_jvm.org.apache.kafka.connect.mirror.MirrorClient(props)
    try:
        assert expected in set(client.checkpointTopics())
    finally:
        client.close()
