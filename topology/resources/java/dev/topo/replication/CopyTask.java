package dev.topo.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;

/**
 * The copying of one copy slot ({@link Slot}, its {@link SlotHost}): a consumer of the source
 * partitions the flow's leader gives the slot, a producer to the target, and nothing in between but
 * topo's loop rules and stamps ({@link Hops}).
 *
 * <p>A record is sent as soon as a poll returns it, to the same partition of its remote topic with
 * its key, value, headers and timestamp. How far each partition is copied is committed to the
 * flow's progress group on the target (as the offset of its copy's partition, whose value is the
 * next source offset) every {@code commit_ms}: at-least-once, as far as the producer has had its
 * copies acknowledged, on the {@link Ledger}'s thread (so a committed position never runs ahead of
 * the records on the target, and committing never holds up the copy); exactly-once, inside the
 * Kafka transaction that holds the records ({@code sendOffsetsToTransaction}), so both become
 * visible to read_committed readers, or neither does. A partition always goes to the same slot
 * ({@link CopyLoop}), so its transactions all have the same transactional id: a restarted slot's
 * {@code initTransactions} aborts what its predecessor left open (and fences it) before it reads
 * where to go on from.
 */
final class CopyTask implements Runnable {
  /**
   * The longest a poll waits (records end it at once): while no position waits to be committed a
   * slot wakes this seldom, as MM2's tasks do ({@code consumer.poll.timeout.ms}); each wake walks
   * every partition the consumer holds.
   */
  static final long IDLE_POLL_MS = 1_000;

  /**
   * At-least-once, how long the positions of heartbeats partitions alone may wait to be committed.
   * A flow's heartbeat arrives every second and no consumer group reads its copies, so an idle flow
   * would otherwise commit every second for it; its position is said at once (as copied) and
   * committed with the next commit another partition makes, or after this long. A crash copies at
   * most this many seconds of heartbeats again.
   */
  static final long HEARTBEATS_COMMIT_MS = 10_000;

  private static final Duration CLOSE = Duration.ofSeconds(10);

  private final SlotHost host;
  private RecordFilter filter;
  private final Map<String, Object> consumerSettings;
  private final Map<String, Object> ledgerSettings;
  private final Map<String, Object> producerSettings;
  private final boolean exactlyOnce;

  /**
   * Per partition, the next offset to copy, committed: every record before it is copied (a
   * heartbeats partition's, as far as its copies are acknowledged: see {@link
   * #HEARTBEATS_COMMIT_MS}).
   */
  final Map<TopicPartition, Long> done = new ConcurrentHashMap<>();

  /** Per partition, its end as the consumer last saw it. */
  final Map<TopicPartition, Long> latest = new ConcurrentHashMap<>();

  final AtomicLong polled = new AtomicLong();

  /**
   * The assignment version the copy has taken up: a partition it no longer holds had its position
   * committed (and, exactly-once, its transaction) before this was set.
   */
  volatile int applied = -1;

  volatile boolean finished;
  private volatile Exception sendFailure;
  private boolean inTransaction;
  private KafkaConsumer<byte[], byte[]> consumer;

  /** The progress group on the target: it reads and commits the positions. */
  private Ledger ledger;

  /** Per partition, its sends not acknowledged yet and the offset after the last one that was. */
  private final Map<TopicPartition, Sent> sent = new HashMap<>();

  private static final class Sent {
    final AtomicLong unacknowledged = new AtomicLong();
    final AtomicLong acknowledged = new AtomicLong(-1);
  }

  private KafkaProducer<byte[], byte[]> producer;

  /** The topic map (source -> remote) of the partitions assigned now. */
  private Map<String, String> topics = Collections.emptyMap();

  /** The partitions assigned now; for --once, where each ends. */
  private Set<TopicPartition> partitions = Collections.emptySet();

  private final Map<TopicPartition, Long> ends = new HashMap<>();

  /** Positions read past but not committed yet. */
  private final Map<TopicPartition, Long> pending = new HashMap<>();

  /** When positions were last committed (at-least-once, on the copy thread's clock). */
  private long committedAt = System.currentTimeMillis();

  CopyTask(
      SlotHost host,
      Map<String, Object> consumerSettings,
      Map<String, Object> ledgerSettings,
      Map<String, Object> producerSettings,
      boolean exactlyOnce) {
    this.host = host;
    this.consumerSettings = consumerSettings;
    this.ledgerSettings = ledgerSettings;
    this.producerSettings = producerSettings;
    this.exactlyOnce = exactlyOnce;
  }

  @Override
  public void run() {
    try {
      filter = host.filter();
      consumer = new KafkaConsumer<>(consumerSettings);
      ledger = new Ledger(ledgerSettings, Thread.currentThread().getName() + "-progress");
      producer = new KafkaProducer<>(producerSettings);
      if (exactlyOnce) {
        producer.initTransactions();
      }
      copy();
    } catch (Throwable problem) { // an Error too: the flow must fail, never look done
      host.failed(problem);
    } finally {
      for (AutoCloseable client : new AutoCloseable[] {consumer, producer}) {
        close(client);
      }
      if (ledger != null) {
        ledger.close();
      }
      finished = true;
    }
  }

  private void copy() throws Exception {
    int version = -1;
    long lastCommit = System.currentTimeMillis();
    boolean clean = false;
    try {
      while (!host.stopping()) {
        CopyLoop.Assignment now = host.assignment();
        if (now.version != version) {
          version = now.version;
          reassign(now);
          applied = version;
        }
        if (host.config().once() && reached()) {
          break; // everything the source held at the start is copied (or none was given)
        }
        if (partitions.isEmpty()) {
          host.awaitChange(version);
          continue;
        }
        ConsumerRecords<byte[], byte[]> records;
        long every = host.config().commitMs();
        Duration wait =
            Duration.ofMillis(
                pollMs(System.currentTimeMillis(), lastCommit, every, !pending.isEmpty()));
        try {
          records = consumer.poll(wait);
        } catch (OffsetOutOfRangeException outOfRange) {
          lost(outOfRange.offsetOutOfRangePartitions());
          continue;
        }
        if (!records.isEmpty()) {
          copyRecords(records);
        }
        long clock = System.currentTimeMillis();
        // Behind (more left to read than a poll just took): commit less often, a copy is late
        // anyway and each transaction waits for every record in it; caught up, as often as
        // commit_ms says.
        if (behind(records.count(), left(records))) {
          every = host.config().busyCommitMs();
        }
        if (clock - lastCommit >= every) {
          readPast();
          if (exactlyOnce) {
            commit(pending);
          } else {
            commitAcknowledged(clock);
          }
          lastCommit = clock;
          observeEnds();
        }
      }
      clean = !host.halted();
    } finally {
      if (clean) {
        readPast();
        commit(pending); // what was copied before a stop or the end
        ledger.settle(); // and the commit in flight, if any: a failed one fails the flow
      } else if (inTransaction) {
        try {
          producer.abortTransaction();
        } catch (RuntimeException ignored) {
          // fenced or closed: the transaction is aborted by the broker anyway
        }
      }
    }
  }

  /**
   * How long a poll may wait at {@code now}: while positions wait to be committed, until the next
   * commit is due ({@code every} after {@code lastCommit}); else, idle, {@link #IDLE_POLL_MS}.
   */
  static long pollMs(long now, long lastCommit, long every, boolean waiting) {
    if (!waiting) {
      return IDLE_POLL_MS;
    }
    return Math.max(0, Math.min(IDLE_POLL_MS, lastCommit + every - now));
  }

  /**
   * Whether a slot is behind: after a poll that took {@code taken} records, the partitions it took
   * them from hold {@code left} more not read yet (a few records arriving while caught up are not a
   * backlog).
   */
  static boolean behind(int taken, long left) {
    return taken > 0 && left >= taken;
  }

  /** How many records the partitions of {@code records} hold past their positions, as last seen. */
  private long left(ConsumerRecords<byte[], byte[]> records) {
    long left = 0;
    for (TopicPartition partition : records.partitions()) {
      left += consumer.currentLag(partition).orElse(0);
    }
    return left;
  }

  /**
   * Partitions whose position the source no longer holds: records removed by retention before they
   * were copied (the position is below the log's start), or a log behind the copy (the topic was
   * deleted and made again, or truncated: the position is past its end). Each is reported as a
   * loss; then the copy goes on from the partition's oldest record, or with {@code on_loss: stop}
   * the flow stops there (its position kept, so a restart stops again until the setting changes).
   */
  private void lost(Map<TopicPartition, Long> positions) {
    Map<TopicPartition, Long> starts = consumer.beginningOffsets(positions.keySet());
    Map<TopicPartition, Long> ends = consumer.endOffsets(positions.keySet());
    List<String> said = new ArrayList<>();
    for (Map.Entry<TopicPartition, Long> at : positions.entrySet()) {
      TopicPartition partition = at.getKey();
      long start = starts.getOrDefault(partition, 0L);
      said.add(loss(partition, at.getValue(), start, ends.getOrDefault(partition, start)));
    }
    stopOnLoss(said);
    consumer.seekToBeginning(positions.keySet());
    for (TopicPartition partition : positions.keySet()) {
      pending.put(partition, consumer.position(partition));
    }
  }

  /** One partition's loss, counted in the loop's figures; what it is, for a person. */
  private String loss(TopicPartition partition, long from, long start, long end) {
    if (from < start) {
      host.figures().lost(new LoopFigures.Loss(partition, "retention", from, start));
      return partition + " offsets " + from + " to " + (start - 1) + " removed before copied";
    }
    host.figures().lost(new LoopFigures.Loss(partition, "reset", end, from));
    return partition + " ends at " + end + ", behind the copy at " + from;
  }

  private void stopOnLoss(List<String> said) {
    if (!said.isEmpty() && host.config().stopOnLoss()) {
      throw new IllegalStateException(
          "records lost on the source ("
              + String.join("; ", said)
              + "); on_loss: stop keeps the flow here");
    }
  }

  private void copyRecords(ConsumerRecords<byte[], byte[]> records) {
    long clock = System.currentTimeMillis();
    long[] latencies = new long[records.count()];
    for (TopicPartition partition : records.partitions()) {
      List<ConsumerRecord<byte[], byte[]>> these = records.records(partition);
      String remote = topics.get(partition.topic());
      long size = 0;
      int copied = 0;
      long newest = Long.MIN_VALUE;
      Sent mine = sent.computeIfAbsent(partition, p -> new Sent());
      for (ConsumerRecord<byte[], byte[]> record : these) {
        Headers headers = host.hops().copied(record.headers(), record.offset());
        if (headers == null) {
          continue; // a loop: it has been on the target, or must not be forwarded
        }
        if (filter != null && !filter.keep(record)) {
          continue; // the flow's filter leaves it out (its position moves past it all the same)
        }
        if (exactlyOnce && !inTransaction) {
          producer.beginTransaction();
          inTransaction = true;
        }
        send(mine, record, partition.partition(), remote, headers);
        long timestamp = record.timestamp();
        size += (record.key() == null ? 0 : record.key().length);
        size += (record.value() == null ? 0 : record.value().length);
        latencies[copied++] = Math.max(0, clock - timestamp);
        newest = Math.max(newest, timestamp);
      }
      if (copied > 0) {
        host.figures().add(partition, copied, size, latencies, copied, newest);
      }
      pending.put(partition, consumer.position(partition));
    }
    polled.addAndGet(records.count());
  }

  private void send(
      Sent mine,
      ConsumerRecord<byte[], byte[]> record,
      int partition,
      String remote,
      Headers headers) {
    long timestamp = record.timestamp();
    long next = record.offset() + 1;
    mine.unacknowledged.incrementAndGet();
    producer.send(
        new ProducerRecord<>(
            remote,
            partition,
            timestamp < 0 ? null : timestamp,
            record.key(),
            record.value(),
            headers),
        (metadata, problem) -> {
          if (problem != null) {
            if (sendFailure == null) {
              sendFailure = problem; // before the count: a reader seeing 0 sees this
            }
          } else {
            mine.acknowledged.set(next); // in order, per partition (acks=all, idempotence)
          }
          mine.unacknowledged.decrementAndGet();
        });
  }

  /**
   * At-least-once, without waiting for the producer: each partition's position as far as its copies
   * are acknowledged (all of them: where it has been read to; else the offset after the last one
   * acknowledged, a partition's acknowledgements coming in order), committed on the ledger's
   * thread.
   */
  private void commitAcknowledged(long clock) throws Exception {
    Map<TopicPartition, Long> ready = new HashMap<>();
    for (Map.Entry<TopicPartition, Long> read : pending.entrySet()) {
      Sent mine = sent.get(read.getKey());
      if (mine == null || mine.unacknowledged.get() == 0) {
        ready.put(read.getKey(), read.getValue());
      } else {
        long acknowledged = mine.acknowledged.get();
        Long known = done.get(read.getKey());
        boolean behindRead = acknowledged <= read.getValue(); // (a position moved back: wait)
        if (acknowledged >= 0 && behindRead && (known == null || acknowledged > known)) {
          ready.put(read.getKey(), acknowledged);
        }
      }
    }
    Exception problem = sendFailure;
    if (problem != null) {
      throw new IllegalStateException("a copy could not be written: " + problem, problem);
    }
    if (ready.isEmpty()) {
      return;
    }
    if (canWait(ready.keySet(), host.config()::heartbeats, clock - committedAt)) {
      if (!ledger.committing()) { // (a commit in flight would then say an older position)
        done.putAll(ready); // copied: said now, committed later (pending keeps them till then)
      }
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    ready.forEach((at, offset) -> offsets.put(remote(at), new OffsetAndMetadata(offset)));
    if (ledger.commitLater(offsets, () -> done.putAll(ready))) {
      ready.forEach((at, offset) -> pending.remove(at, offset));
      committedAt = clock;
    }
  }

  /**
   * At-least-once, whether the positions of {@code ready} may wait to be committed, {@code since}
   * ms after the last commit: when all are heartbeats partitions ({@code heartbeats} says of a
   * topic) and {@link #HEARTBEATS_COMMIT_MS} has not passed.
   */
  static boolean canWait(Set<TopicPartition> ready, Predicate<String> heartbeats, long since) {
    if (since >= HEARTBEATS_COMMIT_MS) {
      return false;
    }
    for (TopicPartition partition : ready) {
      if (!heartbeats.test(partition.topic())) {
        return false;
      }
    }
    return true;
  }

  /**
   * Positions moved past records no poll returns (transaction markers, aborted transactions) are
   * positions too: every record before a partition's position was returned and sent already.
   */
  private void readPast() {
    for (TopicPartition partition : partitions) {
      long position = consumer.position(partition);
      Long known = pending.containsKey(partition) ? pending.get(partition) : done.get(partition);
      if (known == null || position > known) {
        pending.put(partition, position);
      }
    }
  }

  /** Make what was copied durable and record how far: see the class's comment. */
  private void commit(Map<TopicPartition, Long> positions) throws Exception {
    if (positions.isEmpty() && !inTransaction) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    positions.forEach((at, offset) -> offsets.put(remote(at), new OffsetAndMetadata(offset)));
    if (inTransaction) {
      producer.sendOffsetsToTransaction(offsets, ledger.group());
      producer.commitTransaction();
      inTransaction = false;
    } else {
      // At-least-once; or exactly-once with no record sent since the last commit (every one
      // read was filtered out, or the positions a partition starts from): nothing to make atomic.
      producer.flush();
      Exception problem = sendFailure;
      if (problem != null) {
        throw new IllegalStateException("a copy could not be written: " + problem, problem);
      }
      ledger.commit(offsets);
    }
    done.putAll(positions);
    positions.clear();
  }

  /**
   * Take the partitions of a new assignment: those kept go on where they are; each new one from its
   * committed position (one the source no longer holds is a loss, see {@link #lost}), else where
   * the loop says it starts. A partition newly started has its position committed at once.
   */
  private void reassign(CopyLoop.Assignment now) throws Exception {
    Set<TopicPartition> fresh = new HashSet<>(now.partitions);
    fresh.removeAll(partitions);
    if (fresh.isEmpty() && now.partitions.equals(partitions)) {
      topics = now.topics;
      return;
    }
    readPast();
    commit(pending); // under the topic map it was read with
    ledger.settle(); // and every commit before it done
    topics = now.topics;
    partitions = now.partitions;
    consumer.assign(partitions); // a partition kept keeps its position
    done.keySet().retainAll(partitions);
    latest.keySet().retainAll(partitions);
    sent.keySet().retainAll(partitions);
    if (fresh.isEmpty()) {
      return;
    }
    Map<TopicPartition, TopicPartition> remotes = new HashMap<>();
    for (TopicPartition partition : fresh) {
      remotes.put(remote(partition), partition);
    }
    Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
    ledger
        .committed(remotes.keySet())
        .forEach((at, offset) -> committed.put(remotes.get(at), offset));
    Map<TopicPartition, Long> last = consumer.endOffsets(fresh);
    Map<TopicPartition, Long> started = new HashMap<>();
    List<TopicPartition> earliest = new ArrayList<>();
    List<TopicPartition> newest = new ArrayList<>();
    List<String> reset = new ArrayList<>();
    for (TopicPartition partition : fresh) {
      OffsetAndMetadata at = committed.get(partition);
      long start = host.start(partition, at == null ? null : at.offset());
      Long end = last.get(partition);
      if (start >= 0 && end != null && start > end) { // the topic is not the one copied before
        reset.add(loss(partition, start, 0, end));
        start = CopyLoop.EARLIEST;
      }
      // A position below the partition's start (retention) is found by the first poll.
      if (start >= 0) {
        consumer.seek(partition, start);
        if (at != null && at.offset() == start) {
          done.put(partition, start);
          continue;
        }
      } else if (start == CopyLoop.LATEST) {
        newest.add(partition);
      } else {
        earliest.add(partition);
      }
      started.put(partition, null);
    }
    stopOnLoss(reset);
    if (!earliest.isEmpty()) { // (an empty collection would mean every assigned partition)
      consumer.seekToBeginning(earliest);
    }
    if (!newest.isEmpty()) {
      consumer.seekToEnd(newest);
    }
    for (TopicPartition partition : started.keySet()) {
      started.put(partition, consumer.position(partition));
    }
    commit(started);
    if (host.config().once()) {
      ends.putAll(last);
    }
    observeEnds();
  }

  /**
   * A source partition's copy: the progress group's positions are kept by these, as the Spark
   * engine's exactly-once writer keeps them (the same group, so either may go on from them).
   */
  private TopicPartition remote(TopicPartition partition) {
    return new TopicPartition(topics.get(partition.topic()), partition.partition());
  }

  private boolean reached() {
    for (TopicPartition partition : partitions) {
      Long end = ends.get(partition);
      if (end != null && consumer.position(partition) < end) {
        return false;
      }
    }
    return true;
  }

  private void observeEnds() {
    for (TopicPartition partition : partitions) {
      OptionalLong behind = consumer.currentLag(partition);
      if (behind.isPresent()) {
        latest.put(partition, consumer.position(partition) + behind.getAsLong());
      }
    }
  }

  private static void close(AutoCloseable client) {
    if (client == null) {
      return;
    }
    try {
      if (client instanceof KafkaProducer) {
        ((KafkaProducer<?, ?>) client).close(CLOSE);
      } else {
        ((KafkaConsumer<?, ?>) client).close(CLOSE);
      }
    } catch (Exception ignored) {
      // closing after a failure: what failed is reported already
    }
  }
}
