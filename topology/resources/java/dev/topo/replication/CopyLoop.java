package dev.topo.replication;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * One flow's copy loop ({@code engine.trigger: loop}): long-lived {@link CopyTask} threads in the
 * driver's JVM, each a consumer of some of the flow's source partitions feeding a producer to the
 * target, instead of Spark micro-batches. A record is copied when a poll returns it, an idle flow
 * sleeps in its poll, and a topic the driver adds joins the running threads ({@link #update})
 * without stopping the copy of the others.
 *
 * <p>Made by {@link #start} from a JSON configuration ({@code topology/spark/loop.py} writes it),
 * parsed and checked whole by {@link LoopConfig} before anything starts). The driver reads {@link
 * #report} as it reads a Spark query's progress: the positions committed (its {@code endOffset}),
 * the ends last seen ({@code latestOffset}), the records read and the {@link CopyFigures}-shaped
 * figures of what was copied since the previous report.
 */
public final class CopyLoop {
  static final long EARLIEST = -2;
  static final long LATEST = -1;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The configuration, parsed and checked ({@link LoopConfig#parse}). */
  final LoopConfig config;

  final Hops hops;
  final LoopFigures figures;
  private final List<CopyTask> tasks = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final String runId = UUID.randomUUID().toString();
  private volatile boolean stopping;
  private volatile boolean halted;
  private volatile String failure;

  /**
   * The partitions the loop began with, and whether the flow had copied any before: only those of a
   * flow that never copied start at its `start`; one found later, at its earliest.
   */
  private final Set<TopicPartition> initial = new HashSet<>();

  private boolean copiedBefore;
  private Map<String, String> topics = Collections.emptyMap();
  private final List<Set<TopicPartition>> assigned = new ArrayList<>();
  private int version;
  private long sequence;
  private long reportedAt = System.currentTimeMillis();
  private Map<TopicPartition, Long> lastPositions = Collections.emptyMap();
  private Map<TopicPartition, Long> lastEnds = Collections.emptyMap();

  /** A task's partitions and the topic map, as of one version of the assignment. */
  static final class Assignment {
    final int version;
    final Set<TopicPartition> partitions;
    final Map<String, String> topics;

    Assignment(int version, Set<TopicPartition> partitions, Map<String, String> topics) {
      this.version = version;
      this.partitions = partitions;
      this.topics = topics;
    }
  }

  private CopyLoop(LoopConfig config) throws Exception {
    this.config = config;
    hops = new Hops(config.source(), config.target(), config.provenance(), config.noForwardFrom());
    figures = new LoopFigures(config.boundsMs());
    for (int i = 0; i < config.tasks(); i++) {
      tasks.add(
          new CopyTask(
              this,
              i,
              config.consumer(i),
              config.ledger(i),
              config.producer(i),
              config.exactlyOnce()));
      assigned.add(new HashSet<>());
    }
    place(config.topics(), config.partitions());
    for (Set<TopicPartition> mine : assigned) {
      initial.addAll(mine);
    }
    copiedBefore = !config.starting().isEmpty() || anyCommitted(config.ledger(0));
  }

  /**
   * Whether the progress group holds a position for any of the flow's partitions now; true when it
   * cannot tell (a transaction a killed driver left open holds the answer until it times out): a
   * partition without a position then starts at its earliest, never skipping a record.
   */
  private boolean anyCommitted(Map<String, Object> ledgerSettings) {
    if (initial.isEmpty()) {
      return false;
    }
    Set<TopicPartition> remotes = new HashSet<>();
    for (TopicPartition partition : initial) {
      remotes.add(new TopicPartition(topics.get(partition.topic()), partition.partition()));
    }
    try (KafkaConsumer<byte[], byte[]> ledger = new KafkaConsumer<>(ledgerSettings)) {
      for (OffsetAndMetadata at : ledger.committed(remotes, Duration.ofSeconds(30)).values()) {
        if (at != null) {
          return true;
        }
      }
      return false;
    } catch (RuntimeException unknown) {
      return true;
    }
  }

  /** A running loop of the configuration given as JSON. */
  public static CopyLoop start(String config) throws Exception {
    CopyLoop loop =
        new CopyLoop(
            LoopConfig.parse(JSON.readValue(config, new TypeReference<Map<String, Object>>() {})));
    String name = "topo-copy-" + loop.runId.substring(0, 8) + "-";
    for (int i = 0; i < loop.tasks.size(); i++) {
      Thread thread = new Thread(loop.tasks.get(i), name + i);
      thread.setDaemon(true);
      loop.threads.add(thread);
      thread.start();
    }
    return loop;
  }

  /**
   * The flow's topics (source -> remote) and their partition counts, as the driver now has them:
   * each new partition goes to its thread ({@link #place}), the others stay where they are.
   */
  public void update(String topicsJson, String partitionsJson) throws Exception {
    place(
        JSON.readValue(topicsJson, new TypeReference<Map<String, String>>() {}),
        JSON.readValue(partitionsJson, new TypeReference<Map<String, Integer>>() {}));
  }

  /**
   * Each partition goes to one thread, always the same (by its topic's hash plus its number, so a
   * topic's partitions take turns): its exactly-once transactions then all have one transactional
   * id, whatever joined or left, across restarts. Nothing changes when nothing did.
   */
  private synchronized void place(Map<String, String> topics, Map<String, Integer> partitions) {
    List<Set<TopicPartition>> next = new ArrayList<>();
    for (int i = 0; i < tasks.size(); i++) {
      next.add(new HashSet<>());
    }
    for (String topic : topics.keySet()) {
      for (int p = 0; p < partitions.getOrDefault(topic, 0); p++) {
        next.get(Math.floorMod(topic.hashCode() + p, tasks.size()))
            .add(new TopicPartition(topic, p));
      }
    }
    if (next.equals(assigned) && topics.equals(this.topics)) {
      return;
    }
    this.topics = Collections.unmodifiableMap(new HashMap<>(topics));
    assigned.clear();
    assigned.addAll(next);
    version++;
    notifyAll();
  }

  synchronized Assignment assignment(int task) {
    return new Assignment(
        version, Collections.unmodifiableSet(new HashSet<>(assigned.get(task))), topics);
  }

  /** Wait (a little) for an assignment newer than `seen`, or a stop. */
  synchronized void awaitChange(int seen) throws InterruptedException {
    if (version == seen && !stopping) {
      wait(200);
    }
  }

  /**
   * Where a partition taken up starts ({@link LoopConfig#start}): a partition the loop began with,
   * of a flow that never copied, may start at the flow's start; one found since (a new topic or
   * partition) starts at its earliest, so none of its records is skipped.
   */
  long start(TopicPartition partition, Long committed) {
    return config.start(partition, committed, !copiedBefore && initial.contains(partition));
  }

  boolean stopping() {
    return stopping;
  }

  boolean halted() {
    return halted;
  }

  void failed(Throwable problem) {
    if (failure == null) {
      String message = problem.getMessage();
      failure = problem.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
    stopping = true;
  }

  /** Why the loop stopped on its own, or null. */
  public String failure() {
    return failure;
  }

  /** Whether any task still copies (false once every one stopped, ended or failed). */
  public boolean isActive() {
    for (CopyTask task : tasks) {
      if (!task.finished) {
        return true;
      }
    }
    return false;
  }

  /**
   * Stop every task at once, committing nothing more (the lease is lost): another driver may write
   * now.
   */
  public void halt() {
    synchronized (this) {
      halted = true;
      stopping = true;
      notifyAll();
    }
  }

  /** Stop every task once it has committed what it copied; wait for them up to `timeoutMs`. */
  public void stop(long timeoutMs) throws InterruptedException {
    synchronized (this) {
      stopping = true;
      notifyAll();
    }
    long until = System.currentTimeMillis() + timeoutMs;
    for (Thread thread : threads) {
      thread.join(Math.max(1, until - System.currentTimeMillis()));
    }
  }

  /**
   * What happened since the last report, as the loop's own versioned record (JSON, format {@link
   * #REPORT_FORMAT}; {@code topology/progress.py} reads it), or null when nothing did: no record
   * read, no position or end moved. Per source partition: its position (every record before it was
   * copied or filtered out, and committed), the source's end as the consumer knows it, and what was
   * copied since the last report; the flow's latency buckets; each slot's state.
   */
  public synchronized String report() throws Exception {
    Map<TopicPartition, Long> positions = new HashMap<>();
    Map<TopicPartition, Long> ends = new HashMap<>();
    long read = 0;
    for (CopyTask task : tasks) {
      read += task.polled.getAndSet(0);
      positions.putAll(task.done);
      ends.putAll(task.latest);
    }
    positions.forEach((partition, at) -> ends.merge(partition, at, Math::max));
    if (read == 0
        && figures.records() == 0
        && !figures.lossesWaiting()
        && positions.equals(lastPositions)
        && ends.equals(lastEnds)) {
      return null;
    }
    LoopFigures.Taken taken = figures.take();
    List<String> slots = new ArrayList<>();
    for (Thread thread : threads) {
      slots.add(thread.isAlive() ? "running" : (failure != null ? "failed" : "stopped"));
    }
    long now = System.currentTimeMillis();
    String report =
        record(runId, ++sequence, now - reportedAt, taken, positions, ends, slots, failure);
    reportedAt = now;
    lastPositions = positions;
    lastEnds = ends;
    return report;
  }

  /** The report's record (JSON), from what {@link #report} gathered. */
  static String record(
      String run,
      long sequence,
      long intervalMs,
      LoopFigures.Taken taken,
      Map<TopicPartition, Long> positions,
      Map<TopicPartition, Long> ends,
      List<String> slotStates,
      String failure)
      throws Exception {
    Set<TopicPartition> named = new TreeSet<>(BY_TOPIC_AND_PARTITION);
    named.addAll(positions.keySet());
    named.addAll(taken.partitions.keySet());
    List<Map<String, Object>> partitions = new ArrayList<>();
    for (TopicPartition partition : named) {
      long[] copied =
          taken.partitions.getOrDefault(partition, new long[] {0, 0, 0, Long.MIN_VALUE});
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("topic", partition.topic());
      item.put("partition", partition.partition());
      item.put("position", positions.get(partition));
      item.put("end", ends.get(partition));
      item.put("records", copied[LoopFigures.RECORDS]);
      item.put("bytes", copied[LoopFigures.BYTES]);
      item.put("latency_sum_ms", copied[LoopFigures.LATENCY]);
      long newest = copied[LoopFigures.NEWEST];
      item.put("newest_timestamp_ms", newest == Long.MIN_VALUE ? null : newest);
      partitions.add(item);
    }
    List<Map<String, Object>> slots = new ArrayList<>();
    for (int i = 0; i < slotStates.size(); i++) {
      Map<String, Object> slot = new LinkedHashMap<>();
      slot.put("slot", i);
      slot.put("state", slotStates.get(i));
      slot.put("failure", "failed".equals(slotStates.get(i)) ? failure : null);
      slots.add(slot);
    }
    List<Map<String, Object>> losses = new ArrayList<>();
    for (LoopFigures.Loss loss : taken.losses) {
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("topic", loss.partition.topic());
      item.put("partition", loss.partition.partition());
      item.put("kind", loss.kind);
      item.put("from", loss.from);
      item.put("to", loss.to);
      losses.add(item);
    }
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("format", REPORT_FORMAT);
    report.put("run", run);
    report.put("sequence", sequence);
    report.put("interval_ms", intervalMs);
    report.put("latency_sum_ms", taken.latency);
    report.put("latency_buckets", taken.buckets);
    report.put("partitions", partitions);
    report.put("slots", slots);
    report.put("losses", losses);
    return JSON.writeValueAsString(report);
  }

  /** The version of {@link #report}'s record: {@code topology/progress.py} refuses another. */
  static final int REPORT_FORMAT = 1;

  private static final Comparator<TopicPartition> BY_TOPIC_AND_PARTITION =
      Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);
}
