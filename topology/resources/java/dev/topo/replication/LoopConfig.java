package dev.topo.replication;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One flow's copy loop configuration, as {@code topology/spark/loop.py} ({@code config}) writes it:
 * parsed and checked here, in one place, into an immutable value that {@link CopyLoop} and {@link
 * CopyTask} read. Every field is required and typed; a field this class does not know, or a format
 * other than {@link #FORMAT}, is refused ({@link IllegalArgumentException}, naming the field):
 * topo's Python and its Java are then from different versions, and guessing would copy with rules
 * neither side meant.
 *
 * <p>The clients' settings ({@link #consumer}, {@link #ledger}, {@link #producer}, {@link
 * #targetAdmin}) are the given ones with what the loop's correctness rests on set over them: no
 * automatic commits, read_committed reads, byte arrays, and with exactly-once one transactional id
 * per thread.
 */
final class LoopConfig {
  /** The format this class reads; loop.py sends it as {@code format}. */
  static final int FORMAT = 1;

  private static final String WHAT = "the copy loop's configuration";
  private static final List<String> FIELDS =
      List.of(
          "format",
          "source",
          "target",
          "provenance",
          "no_forward_from",
          "exactly_once",
          "group",
          "transactional_prefix",
          "client_id",
          "source_client",
          "target_client",
          "producer",
          "admin",
          "topics",
          "partitions",
          "start",
          "starting",
          "starting_wins",
          "once",
          "tasks",
          "commit_ms",
          "busy_commit_ms",
          "rebalance_ms",
          "bounds_ms",
          "on_loss",
          "separator");

  /**
   * A slot's poll takes every record its consumer has fetched, unless {@code source_client} says
   * otherwise. Kafka 3.9's consumer (the one Spark's connector brings) leaves a partition that
   * still holds fetched records out of the next fetch request; when that request then carries only
   * partitions with nothing new, the broker holds it for {@code fetch.max.wait.ms} (500 ms), and no
   * other fetch to that broker is sent meanwhile. With Kafka's default of 500 records a poll, a
   * busy partition that shared a slot with an idle one (the heartbeats topic, a quiet topic) was
   * copied one fetch (1 MiB) every half second.
   */
  static final int MAX_POLL_RECORDS = Integer.MAX_VALUE;

  static final String HEARTBEATS = "heartbeats";

  private final String source;
  private final String target;
  private final boolean provenance;
  private final Set<String> noForwardFrom;
  private final boolean exactlyOnce;
  private final String group;
  private final String transactionalPrefix;
  private final String clientId;
  private final Map<String, String> sourceClient;
  private final Map<String, String> targetClient;
  private final Map<String, String> producerClient;
  private final Map<String, String> adminClient;
  private final Map<String, String> topics;
  private final Map<String, Integer> partitions;
  private final boolean startLatest;
  private final Map<String, Map<Integer, Long>> starting;
  private final boolean startingWins;
  private final boolean once;
  private final int tasks;
  private final long commitMs;
  private final long busyCommitMs;
  private final long rebalanceMs;
  private final long[] boundsMs;
  private final boolean stopOnLoss;
  private final String separator;

  private LoopConfig(Map<String, Object> given) {
    source = name(given, "source");
    target = name(given, "target");
    if (source.equals(target)) {
      throw refused("`source` and `target` are both " + quoted(source));
    }
    provenance = flag(given, "provenance");
    noForwardFrom = names(given, "no_forward_from");
    exactlyOnce = flag(given, "exactly_once");
    group = name(given, "group");
    transactionalPrefix = name(given, "transactional_prefix");
    clientId = name(given, "client_id");
    sourceClient = settings(given, "source_client");
    targetClient = settings(given, "target_client");
    producerClient = settings(given, "producer");
    adminClient = settings(given, "admin");
    topics = topicMap(given, "topics");
    partitions = partitionCounts(given, "partitions", topics);
    String start = name(given, "start");
    if (!start.equals("earliest") && !start.equals("latest")) {
      throw refused("`start` must be \"earliest\" or \"latest\", not " + quoted(start));
    }
    startLatest = start.equals("latest");
    starting = positions(given, "starting");
    startingWins = flag(given, "starting_wins");
    once = flag(given, "once");
    tasks = (int) whole(given, "tasks", 1, 1024);
    commitMs = whole(given, "commit_ms", 1, Long.MAX_VALUE);
    // While a thread is behind it commits less often, never more often than commit_ms.
    busyCommitMs = Math.max(commitMs, whole(given, "busy_commit_ms", 1, Long.MAX_VALUE));
    rebalanceMs = whole(given, "rebalance_ms", 0, Long.MAX_VALUE);
    boundsMs = bounds(given, "bounds_ms");
    String onLoss = name(given, "on_loss");
    if (!onLoss.equals("alert") && !onLoss.equals("stop")) {
      throw refused("`on_loss` must be \"alert\" or \"stop\", not " + quoted(onLoss));
    }
    stopOnLoss = onLoss.equals("stop");
    separator = name(given, "separator");
  }

  /**
   * The configuration in {@code given} (JSON read into maps, lists, strings, numbers, booleans),
   * checked whole: a missing, unknown or mistyped field, or another format, is an
   * IllegalArgumentException saying which.
   */
  static LoopConfig parse(Map<String, Object> given) {
    if (given == null) {
      throw refused("none was given");
    }
    if (!given.containsKey("format")) {
      throw refused(
          "it has no `format`; this jar reads format "
              + FORMAT
              + " (topo's Python and Java are from different versions)");
    }
    Object format = given.get("format");
    if (!(format instanceof Integer || format instanceof Long)
        || ((Number) format).longValue() != FORMAT) {
      throw refused(
          "format "
              + describe(format)
              + " is not one this jar reads (format "
              + FORMAT
              + "; topo's Python and Java are from different versions)");
    }
    Set<String> unknown = new TreeSet<>(given.keySet());
    unknown.removeAll(FIELDS);
    if (!unknown.isEmpty()) {
      throw refused("unknown field(s) " + unknown + " (format " + FORMAT + " has " + FIELDS + ")");
    }
    return new LoopConfig(given);
  }

  String source() {
    return source;
  }

  String target() {
    return target;
  }

  boolean provenance() {
    return provenance;
  }

  /** The clusters whose records this flow must not forward when they are a record's last hop. */
  Set<String> noForwardFrom() {
    return noForwardFrom;
  }

  boolean exactlyOnce() {
    return exactlyOnce;
  }

  /** The progress group on the target, where positions are committed. */
  String group() {
    return group;
  }

  /** The flow's topics, source name to the name of its copies on the target. */
  Map<String, String> topics() {
    return topics;
  }

  /** Each topic's partition count, as the driver saw it at start. */
  Map<String, Integer> partitions() {
    return partitions;
  }

  /**
   * Whether a flow that never copied starts its partitions at their ends (else at the earliest).
   */
  boolean startLatest() {
    return startLatest;
  }

  /**
   * Where a handover (from MM2, or from a Spark checkpoint of micro-batches) starts partitions:
   * topic, partition, offset (-2 the earliest, -1 the latest, as Spark's startingOffsets). Empty
   * without one.
   */
  Map<String, Map<Integer, Long>> starting() {
    return starting;
  }

  /** Whether the handover's positions win over those of the progress group. */
  boolean startingWins() {
    return startingWins;
  }

  /** Copy what the sources hold now, then stop (topo's --once). */
  boolean once() {
    return once;
  }

  /**
   * Whether records the source no longer holds (removed before they were copied, a log reset under
   * the copy) stop the flow there ({@code on_loss: stop}); else the copy goes on from the oldest
   * record and reports the loss.
   */
  boolean stopOnLoss() {
    return stopOnLoss;
  }

  /**
   * Whether {@code topic} is a heartbeats topic: {@code heartbeats}, or a copy of one ({@code
   * <alias><separator>heartbeats}), as {@code naming.is_heartbeats} says.
   */
  boolean heartbeats(String topic) {
    return topic.equals(HEARTBEATS) || topic.endsWith(separator + HEARTBEATS);
  }

  /** The number of copy slots. */
  int tasks() {
    return tasks;
  }

  /** How often positions are committed while a thread keeps up. */
  long commitMs() {
    return commitMs;
  }

  /** How often positions are committed while a thread is behind (at least {@link #commitMs}). */
  long busyCommitMs() {
    return busyCommitMs;
  }

  /**
   * How long after the loop's start, and after each move, the leader waits before it may move a
   * partition off a busy slot ({@link Rebalance}); 0: never.
   */
  long rebalanceMs() {
    return rebalanceMs;
  }

  /** The latency buckets' upper bounds, ascending (a copy: the caller may keep it). */
  long[] boundsMs() {
    return boundsMs.clone();
  }

  /**
   * Where a partition taken up starts, given its committed position (or null): an offset, {@link
   * CopyLoop#EARLIEST} or {@link CopyLoop#LATEST}. The committed position, unless the handover's
   * positions win ({@code starting_wins}) and it has one for the partition; else the handover's
   * position; else the flow's {@code start} when {@code flowStart} (a partition the loop began
   * with, of a flow that never copied), and the earliest otherwise.
   */
  long start(TopicPartition partition, Long committed, boolean flowStart) {
    Map<Integer, Long> topic = starting.get(partition.topic());
    Long handover = topic == null ? null : topic.get(partition.partition());
    if (committed != null && !(startingWins && handover != null)) {
      return committed;
    }
    if (handover != null) {
      return handover;
    }
    return flowStart && startLatest ? CopyLoop.LATEST : CopyLoop.EARLIEST;
  }

  /** Copy thread {@code task}'s consumer of the source. */
  Map<String, Object> consumer(int task) {
    Map<String, Object> settings = new HashMap<>(sourceClient);
    settings.putIfAbsent("max.poll.records", String.valueOf(MAX_POLL_RECORDS));
    settings.put("enable.auto.commit", "false");
    settings.put("isolation.level", "read_committed");
    // A position the source no longer holds is never skipped silently: CopyTask reports it as a
    // loss, then goes on from the oldest record (or stops, with on_loss: stop).
    settings.put("auto.offset.reset", "none");
    settings.put("key.deserializer", ByteArrayDeserializer.class.getName());
    settings.put("value.deserializer", ByteArrayDeserializer.class.getName());
    settings.put("client.id", clientId + "-" + task);
    return settings;
  }

  /** Copy thread {@code task}'s consumer of the target in the progress group ({@link Ledger}). */
  Map<String, Object> ledger(int task) {
    Map<String, Object> settings = new HashMap<>(targetClient);
    settings.put("group.id", group);
    settings.put("enable.auto.commit", "false");
    // committed() then waits for a position inside an open transaction to be decided
    settings.put("isolation.level", "read_committed");
    settings.put("key.deserializer", ByteArrayDeserializer.class.getName());
    settings.put("value.deserializer", ByteArrayDeserializer.class.getName());
    settings.put("client.id", clientId + "-progress-" + task);
    return settings;
  }

  /** Copy thread {@code task}'s producer to the target. */
  Map<String, Object> producer(int task) {
    Map<String, Object> settings = new HashMap<>(targetClient);
    settings.putAll(producerClient);
    settings.put("key.serializer", ByteArraySerializer.class.getName());
    settings.put("value.serializer", ByteArraySerializer.class.getName());
    settings.put("client.id", clientId + "-" + task);
    if (exactlyOnce) {
      // A partition always goes to the same thread: its transactions always have this id.
      settings.put("transactional.id", transactionalStem() + task);
    }
    return settings;
  }

  /** The transactional ids of the flow's slots: this, then the slot's index. */
  String transactionalStem() {
    return transactionalPrefix + ".loop.";
  }

  /** An admin client of the target (the leader's, in the driver). */
  Map<String, Object> targetAdmin() {
    Map<String, Object> settings = new HashMap<>(targetClient);
    settings.putAll(adminClient);
    settings.put("client.id", clientId + "-leader");
    return settings;
  }

  private static IllegalArgumentException refused(String why) {
    return new IllegalArgumentException(WHAT + " is refused: " + why);
  }

  private static Object required(Map<String, Object> given, String field) {
    Object value = given.get(field);
    if (value == null) {
      throw refused(
          given.containsKey(field) ? "`" + field + "` is null" : "`" + field + "` is missing");
    }
    return value;
  }

  private static String name(Map<String, Object> given, String field) {
    Object value = required(given, field);
    if (!(value instanceof String) || ((String) value).isEmpty()) {
      throw refused("`" + field + "` must be a non-empty string, not " + describe(value));
    }
    return (String) value;
  }

  private static boolean flag(Map<String, Object> given, String field) {
    Object value = required(given, field);
    if (!(value instanceof Boolean)) {
      throw refused("`" + field + "` must be true or false, not " + describe(value));
    }
    return (Boolean) value;
  }

  private static long whole(Map<String, Object> given, String field, long least, long most) {
    Object value = required(given, field);
    if (!isWhole(value)
        || ((Number) value).longValue() < least
        || ((Number) value).longValue() > most) {
      String range = most == Long.MAX_VALUE ? ">= " + least : least + ".." + most;
      throw refused("`" + field + "` must be a whole number " + range + ", not " + describe(value));
    }
    return ((Number) value).longValue();
  }

  private static boolean isWhole(Object value) {
    return value instanceof Integer
        || value instanceof Long
        || value instanceof Short
        || value instanceof Byte;
  }

  private static Set<String> names(Map<String, Object> given, String field) {
    Object value = required(given, field);
    if (!(value instanceof List)) {
      throw refused("`" + field + "` must be a list of cluster names, not " + describe(value));
    }
    Set<String> names = new LinkedHashSet<>();
    for (Object name : (List<?>) value) {
      if (!(name instanceof String) || ((String) name).isEmpty()) {
        throw refused("`" + field + "` holds " + describe(name) + ", not a cluster name");
      }
      names.add((String) name);
    }
    return Collections.unmodifiableSet(names);
  }

  private static Map<?, ?> object(Map<String, Object> given, String field) {
    Object value = required(given, field);
    if (!(value instanceof Map)) {
      throw refused("`" + field + "` must be an object, not " + describe(value));
    }
    return (Map<?, ?>) value;
  }

  /** Kafka client settings: names to scalars (kept as text, as Kafka parses them). */
  private static Map<String, String> settings(Map<String, Object> given, String field) {
    Map<String, String> settings = new LinkedHashMap<>();
    for (Map.Entry<?, ?> entry : object(given, field).entrySet()) {
      Object key = entry.getKey();
      Object value = entry.getValue();
      if (!(key instanceof String) || ((String) key).isEmpty()) {
        throw refused("`" + field + "` has a setting named " + describe(key));
      }
      if (!(value instanceof String || value instanceof Boolean || isWhole(value))) {
        throw refused(
            "`"
                + field
                + "` setting "
                + key
                + " must be text, a whole number or true/false, not "
                + describe(value));
      }
      settings.put((String) key, value.toString());
    }
    return Collections.unmodifiableMap(settings);
  }

  private static Map<String, String> topicMap(Map<String, Object> given, String field) {
    Map<String, String> topics = new LinkedHashMap<>();
    for (Map.Entry<?, ?> entry : object(given, field).entrySet()) {
      Object topic = entry.getKey();
      Object remote = entry.getValue();
      if (!(topic instanceof String) || ((String) topic).isEmpty()) {
        throw refused("`" + field + "` has a topic named " + describe(topic));
      }
      if (!(remote instanceof String) || ((String) remote).isEmpty()) {
        throw refused(
            "`" + field + "` maps " + topic + " to " + describe(remote) + ", not a topic name");
      }
      topics.put((String) topic, (String) remote);
    }
    return Collections.unmodifiableMap(topics);
  }

  private static Map<String, Integer> partitionCounts(
      Map<String, Object> given, String field, Map<String, String> topics) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (Map.Entry<?, ?> entry : object(given, field).entrySet()) {
      Object topic = entry.getKey();
      Object count = entry.getValue();
      if (!topics.containsKey(topic)) {
        throw refused("`" + field + "` counts " + describe(topic) + ", which is not in `topics`");
      }
      if (!isWhole(count)
          || ((Number) count).longValue() < 0
          || ((Number) count).longValue() > Integer.MAX_VALUE) {
        throw refused(
            "`" + field + "` of " + topic + " must be a whole number >= 0, not " + describe(count));
      }
      counts.put((String) topic, ((Number) count).intValue());
    }
    return Collections.unmodifiableMap(counts);
  }

  private static Map<String, Map<Integer, Long>> positions(
      Map<String, Object> given, String field) {
    Map<String, Map<Integer, Long>> positions = new LinkedHashMap<>();
    for (Map.Entry<?, ?> entry : object(given, field).entrySet()) {
      Object topic = entry.getKey();
      if (!(topic instanceof String) || ((String) topic).isEmpty()) {
        throw refused("`" + field + "` has a topic named " + describe(topic));
      }
      if (!(entry.getValue() instanceof Map)) {
        throw refused(
            "`"
                + field
                + "` of "
                + topic
                + " must be an object of partitions to offsets, not "
                + describe(entry.getValue()));
      }
      Map<Integer, Long> offsets = new LinkedHashMap<>();
      for (Map.Entry<?, ?> at : ((Map<?, ?>) entry.getValue()).entrySet()) {
        int partition = partitionNumber(at.getKey(), field, topic);
        Object offset = at.getValue();
        if (!isWhole(offset) || ((Number) offset).longValue() < CopyLoop.EARLIEST) {
          throw refused(
              "`"
                  + field
                  + "` of "
                  + topic
                  + " partition "
                  + partition
                  + " must be an offset (-2 the earliest, -1 the latest), not "
                  + describe(offset));
        }
        offsets.put(partition, ((Number) offset).longValue());
      }
      positions.put((String) topic, Collections.unmodifiableMap(offsets));
    }
    return Collections.unmodifiableMap(positions);
  }

  private static int partitionNumber(Object key, String field, Object topic) {
    if (key instanceof String) {
      try {
        int partition = Integer.parseInt((String) key);
        if (partition >= 0 && Integer.toString(partition).equals(key)) {
          return partition;
        }
      } catch (NumberFormatException notANumber) {
        // refused below
      }
    }
    throw refused(
        "`" + field + "` of " + topic + " has a partition " + describe(key) + ", not a number");
  }

  private static long[] bounds(Map<String, Object> given, String field) {
    Object value = required(given, field);
    if (!(value instanceof List)) {
      throw refused("`" + field + "` must be a list of milliseconds, not " + describe(value));
    }
    List<?> listed = (List<?>) value;
    long[] bounds = new long[listed.size()];
    for (int i = 0; i < bounds.length; i++) {
      Object bound = listed.get(i);
      if (!isWhole(bound) || ((Number) bound).longValue() < 0) {
        throw refused("`" + field + "` holds " + describe(bound) + ", not milliseconds >= 0");
      }
      bounds[i] = ((Number) bound).longValue();
      if (i > 0 && bounds[i] <= bounds[i - 1]) {
        throw refused("`" + field + "` must ascend: " + listed);
      }
    }
    return bounds;
  }

  private static String quoted(String text) {
    return "\"" + text + "\"";
  }

  private static String describe(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof String) {
      return quoted((String) value);
    }
    return value + " (" + value.getClass().getSimpleName() + ")";
  }

  @Override
  public String toString() {
    List<String> shown = new ArrayList<>();
    shown.add(source + "->" + target);
    shown.add(topics.size() + " topic(s)");
    shown.add(tasks + " task(s)");
    shown.add(exactlyOnce ? "exactly-once" : "at-least-once");
    return "LoopConfig" + shown; // no client settings: they may hold secrets
  }
}
