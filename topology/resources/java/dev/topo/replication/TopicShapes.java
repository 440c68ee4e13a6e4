package dev.topo.replication;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A cluster's topics and their partition counts, for the running driver's look every few seconds
 * (topology/spark/cluster_looks.py): one metadata request of every topic, read by a Java consumer
 * that belongs to no group and is assigned nothing, so it sends nothing between two looks.
 *
 * <p>The look is here, in the driver's JVM, rather than in librdkafka's Python client, because that
 * client builds a Python object for every partition of every topic on each look: at 6,000
 * partitions, that was about half of an idle driver's Python time. Python gets one line per topic.
 */
public final class TopicShapes implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KafkaConsumer<byte[], byte[]> consumer;

  private TopicShapes(Map<String, Object> settings) {
    consumer = new KafkaConsumer<>(settings);
  }

  /**
   * A look at the cluster of the Java client settings given as a JSON object of strings (a
   * connection's, `connection.java_client_config`); nothing is asked until {@link #shapes}.
   */
  public static TopicShapes open(String settingsJson) throws IOException {
    Map<String, Object> settings =
        new HashMap<>(JSON.readValue(settingsJson, new TypeReference<Map<String, String>>() {}));
    settings.put("enable.auto.commit", "false");
    settings.put("key.deserializer", ByteArrayDeserializer.class.getName());
    settings.put("value.deserializer", ByteArrayDeserializer.class.getName());
    return new TopicShapes(settings);
  }

  /**
   * Every topic the client may see but the cluster's own (named {@code __...}), with its partition
   * count: one line each, {@code name TAB count}, by name. Waits at most {@code timeoutMs} for the
   * answer, else throws the client's exception (a timeout, a refused login).
   */
  public synchronized String shapes(long timeoutMs) {
    return lines(consumer.listTopics(Duration.ofMillis(timeoutMs)));
  }

  /** The lines {@link #shapes} answers for the topics a metadata answer gave. */
  static String lines(Map<String, List<PartitionInfo>> topics) {
    StringBuilder text = new StringBuilder();
    for (Map.Entry<String, List<PartitionInfo>> topic : new TreeMap<>(topics).entrySet()) {
      if (topic.getKey().startsWith("__")) {
        continue;
      }
      text.append(topic.getKey()).append('\t').append(topic.getValue().size()).append('\n');
    }
    return text.toString();
  }

  @Override
  public synchronized void close() {
    consumer.close(Duration.ofSeconds(5));
  }
}
