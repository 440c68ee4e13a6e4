import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.mirror.Checkpoint;
import org.apache.kafka.connect.mirror.Heartbeat;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * What MM2's own client library makes of the records topo writes under MM2's names, for
 * tests/integration/test_offsets.py. Usage: {@code Mm2Reads <bootstrap> <source alias> <group>
 * <topic>...}. Prints, one per line:
 *
 * <ul>
 *   <li>{@code translated <topic> <partition> <offset>}: RemoteClusterUtils.translateOffsets for
 *       the group, from {@code <source alias>.checkpoints.internal};
 *   <li>{@code checkpoint <group> <topic> <partition> <upstream> <downstream>}: every record of
 *       that topic, read with Checkpoint.deserializeRecord;
 *   <li>{@code heartbeat <source> <target> <timestamp>}: every record of each further topic, read
 *       with Heartbeat.deserializeRecord (a topic that does not exist has none).
 * </ul>
 *
 * A record MM2's classes cannot read ends the program with an exception (exit status 1).
 */
public final class Mm2Reads {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String alias = args[1];
    String group = args[2];
    Map<String, Object> client = new HashMap<>();
    client.put("bootstrap.servers", bootstrap);
    Map<TopicPartition, OffsetAndMetadata> translated =
        RemoteClusterUtils.translateOffsets(client, alias, group, Duration.ofSeconds(30));
    Map<String, OffsetAndMetadata> sorted = new TreeMap<>();
    translated.forEach((tp, offset) -> sorted.put(tp.topic() + " " + tp.partition(), offset));
    sorted.forEach((tp, offset) -> System.out.println("translated " + tp + " " + offset.offset()));
    for (ConsumerRecord<byte[], byte[]> record :
        readAll(bootstrap, alias + ".checkpoints.internal")) {
      Checkpoint c = Checkpoint.deserializeRecord(record);
      System.out.println(
          "checkpoint "
              + c.consumerGroupId()
              + " "
              + c.topicPartition().topic()
              + " "
              + c.topicPartition().partition()
              + " "
              + c.upstreamOffset()
              + " "
              + c.downstreamOffset());
    }
    for (int at = 3; at < args.length; at++) {
      for (ConsumerRecord<byte[], byte[]> record : readAll(bootstrap, args[at])) {
        Heartbeat h = Heartbeat.deserializeRecord(record);
        System.out.println(
            "heartbeat "
                + h.sourceClusterAlias()
                + " "
                + h.targetClusterAlias()
                + " "
                + h.timestamp());
      }
    }
  }

  private static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrap, String topic) {
    Properties settings = new Properties();
    settings.put("bootstrap.servers", bootstrap);
    settings.put("enable.auto.commit", "false");
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
      for (PartitionInfo info : infos == null ? List.<PartitionInfo>of() : infos) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
      List<ConsumerRecord<byte[], byte[]>> found = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 60_000;
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("timed out reading " + topic);
        }
        consumer.poll(Duration.ofMillis(500)).forEach(found::add);
      }
      return found;
    }
  }
}
