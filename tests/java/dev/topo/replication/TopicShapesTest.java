package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The running driver's look at a cluster's topics ({@link TopicShapes}): the lines Python reads
 * (topology/spark/cluster_looks.py), and a cluster that does not answer thrown, not waited on.
 */
@Timeout(30)
class TopicShapesTest {
  private static List<PartitionInfo> partitions(String topic, int count) {
    List<PartitionInfo> found = new ArrayList<>();
    for (int partition = 0; partition < count; partition++) {
      found.add(new PartitionInfo(topic, partition, null, null, null));
    }
    return found;
  }

  @Test
  void eachTopicByNameWithItsPartitionCountAndTheClustersOwnLeftOut() {
    Map<String, List<PartitionInfo>> topics = new HashMap<>();
    topics.put("orders", partitions("orders", 12));
    topics.put("__consumer_offsets", partitions("__consumer_offsets", 50));
    topics.put("a.heartbeats", partitions("a.heartbeats", 1));
    topics.put("_schemas", partitions("_schemas", 1));
    assertEquals("_schemas\t1\na.heartbeats\t1\norders\t12\n", TopicShapes.lines(topics));
  }

  @Test
  void noTopicsIsNoLines() {
    assertEquals("", TopicShapes.lines(Map.of()));
  }

  @Test
  void aClusterThatDoesNotAnswerIsAnExceptionWithinTheTimeout() throws Exception {
    // Port 1 on this machine: nothing listens, so no metadata ever comes.
    String settings = "{\"bootstrap.servers\": \"127.0.0.1:1\", \"reconnect.backoff.ms\": \"50\"}";
    try (TopicShapes look = TopicShapes.open(settings)) {
      assertThrows(TimeoutException.class, () -> look.shapes(500));
    }
  }
}
