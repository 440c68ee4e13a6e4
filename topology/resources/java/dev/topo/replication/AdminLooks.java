package dev.topo.replication;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The running driver's slower looks at one cluster (topology/spark/cluster_looks.py): its topics'
 * ids, which tell a topic deleted and made again under a copy, and its partitions' ends, which a
 * flow's lag is measured to. One Java admin client per cluster, in the driver's JVM.
 *
 * <p>These looks are here rather than in librdkafka's Python client because that client builds
 * Python objects for every topic and partition asked (a future and an answer each, the answer of a
 * topic with every partition's replicas), on its own thread holding Python's lock: at 6,000
 * partitions, most of an idle driver's librdkafka and much of its Python time. Python sends and
 * gets lines of text.
 */
public final class AdminLooks implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Admin admin;

  private AdminLooks(Map<String, Object> settings) {
    admin = Admin.create(settings);
  }

  /**
   * Looks at the cluster of the Java client settings given as a JSON object of strings (a
   * connection's, `connection.java_client_config`); nothing is asked until a look.
   */
  public static AdminLooks open(String settingsJson) throws IOException {
    return new AdminLooks(
        new HashMap<>(JSON.readValue(settingsJson, new TypeReference<Map<String, String>>() {})));
  }

  /**
   * The ids of the topics named, one per line: a line {@code name TAB id} for each that exists, by
   * name. Throws the client's exception (a timeout, a refused login) when the cluster does not say,
   * within about {@code timeoutMs}, what each topic is or that it does not exist.
   */
  public String ids(String names, long timeoutMs) throws InterruptedException {
    List<String> asked = names(names);
    if (asked.isEmpty()) {
      return "";
    }
    Map<String, KafkaFuture<TopicDescription>> answers =
        admin
            .describeTopics(
                TopicCollection.ofTopicNames(asked),
                new DescribeTopicsOptions().timeoutMs(Math.toIntExact(timeoutMs)))
            .topicNameValues();
    Map<String, String> found = new TreeMap<>();
    for (Map.Entry<String, KafkaFuture<TopicDescription>> answer : answers.entrySet()) {
      TopicDescription described = answered(answer.getValue(), timeoutMs);
      if (described != null) {
        found.put(answer.getKey(), described.topicId().toString());
      }
    }
    StringBuilder text = new StringBuilder();
    found.forEach((name, id) -> text.append(name).append('\t').append(id).append('\n'));
    return text.toString();
  }

  /**
   * Where the partitions given ({@code topic TAB partition}, one per line) end for a read_committed
   * reader (their last stable offsets): a line {@code topic TAB partition TAB end} for each that
   * exists. Throws the client's exception when an end cannot be had within about {@code timeoutMs}:
   * an end unknown is not an end reached.
   *
   * <p>The topics are described first: the admin client would wait out the whole timeout for a
   * partition its topic does not have (a topic made again with fewer partitions), where it says at
   * once that a deleted topic does not exist.
   */
  public String ends(String partitions, long timeoutMs) throws InterruptedException {
    List<TopicPartition> given = partitions(partitions);
    if (given.isEmpty()) {
      return "";
    }
    Map<String, Integer> counts = new HashMap<>();
    for (TopicPartition partition : given) {
      counts.put(partition.topic(), 0);
    }
    Map<String, KafkaFuture<TopicDescription>> described =
        admin
            .describeTopics(
                TopicCollection.ofTopicNames(counts.keySet()),
                new DescribeTopicsOptions().timeoutMs(Math.toIntExact(timeoutMs)))
            .topicNameValues();
    for (Map.Entry<String, KafkaFuture<TopicDescription>> topic : described.entrySet()) {
      TopicDescription answer = answered(topic.getValue(), timeoutMs);
      counts.put(topic.getKey(), answer == null ? 0 : answer.partitions().size());
    }
    Map<TopicPartition, OffsetSpec> asked = new HashMap<>();
    for (TopicPartition partition : existing(given, counts)) {
      asked.put(partition, OffsetSpec.latest());
    }
    if (asked.isEmpty()) {
      return "";
    }
    ListOffsetsOptions options = new ListOffsetsOptions(IsolationLevel.READ_COMMITTED);
    options.timeoutMs(Math.toIntExact(timeoutMs));
    ListOffsetsResult answers = admin.listOffsets(asked, options);
    StringBuilder text = new StringBuilder();
    for (TopicPartition partition : asked.keySet()) {
      ListOffsetsResult.ListOffsetsResultInfo end =
          answered(answers.partitionResult(partition), timeoutMs);
      if (end != null) {
        text.append(partition.topic()).append('\t').append(partition.partition()).append('\t');
        text.append(end.offset()).append('\n');
      }
    }
    return text.toString();
  }

  /** The partitions given that their topics have, by each topic's partition count (0: none). */
  static List<TopicPartition> existing(List<TopicPartition> given, Map<String, Integer> counts) {
    List<TopicPartition> found = new ArrayList<>();
    for (TopicPartition partition : given) {
      if (partition.partition() < counts.getOrDefault(partition.topic(), 0)) {
        found.add(partition);
      }
    }
    return found;
  }

  /** The topic names of {@link #ids}'s question, without blank lines or repeats, by name. */
  static List<String> names(String text) {
    TreeSet<String> found = new TreeSet<>();
    for (String line : text.split("\n")) {
      if (!line.isBlank()) {
        found.add(line.strip());
      }
    }
    return new ArrayList<>(found);
  }

  /** The partitions of {@link #ends}'s question, without blank lines or repeats. */
  static List<TopicPartition> partitions(String text) {
    List<TopicPartition> found = new ArrayList<>();
    TreeSet<String> seen = new TreeSet<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || !seen.add(line.strip())) {
        continue;
      }
      String[] fields = line.strip().split("\t");
      if (fields.length != 2) {
        throw new IllegalArgumentException("not a partition: " + line.strip());
      }
      found.add(new TopicPartition(fields[0], Integer.parseInt(fields[1])));
    }
    return found;
  }

  /**
   * One topic's or partition's answer: null when it does not exist; the client's own exception (not
   * the future's wrapper) when there is no answer.
   */
  static <T> T answered(KafkaFuture<T> answer, long timeoutMs) throws InterruptedException {
    try {
      // The client fails the call at its timeout; this waits a little longer than that, at most.
      return answer.get(timeoutMs + 5_000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException failed) {
      Throwable cause = failed.getCause();
      if (cause instanceof UnknownTopicOrPartitionException) {
        return null; // deleted (and not made again yet)
      }
      if (cause instanceof KafkaException) {
        throw (KafkaException) cause;
      }
      throw new KafkaException(String.valueOf(cause), cause);
    } catch (java.util.concurrent.TimeoutException late) {
      throw new org.apache.kafka.common.errors.TimeoutException(
          "no answer within " + (timeoutMs + 5_000) + " ms");
    }
  }

  @Override
  public void close() {
    admin.close(java.time.Duration.ofSeconds(5));
  }
}
