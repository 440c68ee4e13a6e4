package dev.topo.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;

/**
 * One thread of a copy loop: a consumer of the source partitions the loop gives it, a producer to
 * the target, and nothing in between but topo's loop rules and stamps ({@link Hops}).
 *
 * <p>A record is sent as soon as a poll returns it, to the same partition of its remote topic with
 * its key, value, headers and timestamp. How far each partition is copied is committed to the
 * flow's progress group on the target (as the offset of its copy's partition, whose value is the
 * next source offset) every {@code commit_ms}: at-least-once, after the producer
 * has flushed (so a committed position never runs ahead of the records on the target); exactly
 * once, inside the Kafka transaction that holds the records ({@code sendOffsetsToTransaction}),
 * so both become visible to read_committed readers, or neither does. A partition starts at its
 * committed position, else where the loop's {@code starting} says (a handover), else at the
 * flow's start.
 */
final class CopyTask implements Runnable {
  private static final Duration POLL = Duration.ofMillis(100);

  private final CopyLoop loop;
  private final int index;
  private final Map<String, Object> consumerSettings;
  private final Map<String, Object> ledgerSettings;
  private final Map<String, Object> producerSettings;
  private final boolean exactlyOnce;
  /** Per partition, the next offset to copy, committed: every record before it is copied. */
  final Map<TopicPartition, Long> done = new ConcurrentHashMap<>();
  /** Per partition, its end as the consumer last saw it. */
  final Map<TopicPartition, Long> latest = new ConcurrentHashMap<>();

  final AtomicLong polled = new AtomicLong();
  volatile boolean finished;
  private volatile Exception sendFailure;
  private boolean inTransaction;
  /** A consumer of the target as the progress group: it reads and commits the positions. */
  private KafkaConsumer<byte[], byte[]> ledger;
  /** The topic map (source -> remote) of the partitions assigned now. */
  private Map<String, String> topics = Collections.emptyMap();

  CopyTask(
      CopyLoop loop,
      int index,
      Map<String, Object> consumerSettings,
      Map<String, Object> ledgerSettings,
      Map<String, Object> producerSettings,
      boolean exactlyOnce) {
    this.loop = loop;
    this.index = index;
    this.consumerSettings = consumerSettings;
    this.ledgerSettings = ledgerSettings;
    this.producerSettings = producerSettings;
    this.exactlyOnce = exactlyOnce;
  }

  @Override
  public void run() {
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerSettings);
        KafkaConsumer<byte[], byte[]> ledger = new KafkaConsumer<>(ledgerSettings);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerSettings)) {
      if (exactlyOnce) {
        producer.initTransactions();
      }
      this.ledger = ledger;
      copy(consumer, producer);
    } catch (Exception problem) {
      loop.failed(problem);
    } finally {
      finished = true;
    }
  }

  private void copy(KafkaConsumer<byte[], byte[]> consumer, KafkaProducer<byte[], byte[]> producer)
      throws Exception {
    CopyLoop.Assignment assigned = null;
    Map<TopicPartition, Long> ends = Collections.emptyMap();
    Map<TopicPartition, Long> pending = new HashMap<>();
    long lastCommit = System.currentTimeMillis();
    boolean clean = false;
    try {
      while (!loop.stopping()) {
        CopyLoop.Assignment now = loop.assignment(index);
        if (assigned == null || now.version != assigned.version) {
          commit(consumer, producer, pending);
          assigned = now;
          topics = now.topics;
          ends = assign(consumer, producer, assigned);
        }
        if (loop.once && reached(consumer, ends)) {
          break; // everything the source held at the start is copied (or none was given)
        }
        if (assigned.partitions.isEmpty()) {
          loop.awaitChange(assigned.version);
          continue;
        }
        ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
        if (!records.isEmpty()) {
          copyRecords(consumer, producer, records, assigned, pending);
        }
        long clock = System.currentTimeMillis();
        if (clock - lastCommit >= loop.commitMs) {
          commit(consumer, producer, pending);
          lastCommit = clock;
          observeEnds(consumer, assigned.partitions);
        }
      }
      clean = true;
    } finally {
      if (clean) {
        commit(consumer, producer, pending); // what was copied before a stop or the end
      } else if (inTransaction) {
        try {
          producer.abortTransaction();
        } catch (RuntimeException ignored) {
          // fenced or closed: the transaction is aborted by the broker anyway
        }
      }
    }
  }

  private void copyRecords(
      KafkaConsumer<byte[], byte[]> consumer,
      KafkaProducer<byte[], byte[]> producer,
      ConsumerRecords<byte[], byte[]> records,
      CopyLoop.Assignment assigned,
      Map<TopicPartition, Long> pending) {
    long clock = System.currentTimeMillis();
    long[] latencies = new long[records.count()];
    for (TopicPartition partition : records.partitions()) {
      List<ConsumerRecord<byte[], byte[]>> these = records.records(partition);
      String remote = assigned.topics.get(partition.topic());
      long size = 0;
      int copied = 0;
      long newest = Long.MIN_VALUE;
      for (ConsumerRecord<byte[], byte[]> record : these) {
        Headers headers = loop.hops.copied(record.headers(), record.offset());
        if (headers == null) {
          continue; // a loop: it has been on the target, or must not be forwarded
        }
        long timestamp = record.timestamp();
        if (exactlyOnce && !inTransaction) {
          producer.beginTransaction();
          inTransaction = true;
        }
        producer.send(
            new ProducerRecord<>(
                remote,
                partition.partition(),
                timestamp < 0 ? null : timestamp,
                record.key(),
                record.value(),
                headers),
            (metadata, problem) -> {
              if (problem != null && sendFailure == null) {
                sendFailure = problem;
              }
            });
        size += (record.key() == null ? 0 : record.key().length);
        size += (record.value() == null ? 0 : record.value().length);
        latencies[copied++] = Math.max(0, clock - timestamp);
        newest = Math.max(newest, timestamp);
      }
      if (copied > 0) {
        loop.figures.add(partition.topic(), copied, size, latencies, copied, newest);
      }
      pending.put(partition, consumer.position(partition));
    }
    polled.addAndGet(records.count());
  }

  /** Make what was copied durable and record how far: see the class's comment. */
  private void commit(
      KafkaConsumer<byte[], byte[]> consumer,
      KafkaProducer<byte[], byte[]> producer,
      Map<TopicPartition, Long> pending) {
    if (pending.isEmpty() && !inTransaction) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    pending.forEach((partition, offset) -> offsets.put(remote(partition), new OffsetAndMetadata(offset)));
    if (inTransaction) {
      producer.sendOffsetsToTransaction(offsets, ledger.groupMetadata());
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
      ledger.commitSync(offsets);
    }
    done.putAll(pending);
    pending.clear();
  }

  /** Take the partitions: each from its committed position, else its start; their ends in once
   * mode (where the copy stops). A partition newly started has its position committed at once. */
  private Map<TopicPartition, Long> assign(
      KafkaConsumer<byte[], byte[]> consumer,
      KafkaProducer<byte[], byte[]> producer,
      CopyLoop.Assignment assigned) {
    Set<TopicPartition> partitions = assigned.partitions;
    consumer.assign(partitions);
    done.keySet().retainAll(partitions);
    latest.keySet().retainAll(partitions);
    if (partitions.isEmpty()) {
      return Collections.emptyMap();
    }
    Map<TopicPartition, TopicPartition> remotes = new HashMap<>();
    for (TopicPartition partition : partitions) {
      remotes.put(remote(partition), partition);
    }
    Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
    ledger.committed(remotes.keySet()).forEach((at, offset) -> committed.put(remotes.get(at), offset));
    Map<TopicPartition, Long> started = new HashMap<>();
    List<TopicPartition> earliest = new ArrayList<>();
    List<TopicPartition> newest = new ArrayList<>();
    for (TopicPartition partition : partitions) {
      OffsetAndMetadata at = committed.get(partition);
      if (at != null) {
        consumer.seek(partition, at.offset());
        done.put(partition, at.offset());
        continue;
      }
      long start = loop.start(partition);
      if (start >= 0) {
        consumer.seek(partition, start);
      } else if (start == CopyLoop.LATEST) {
        newest.add(partition);
      } else {
        earliest.add(partition);
      }
      started.put(partition, null);
    }
    if (!earliest.isEmpty()) { // (an empty collection would mean every assigned partition)
      consumer.seekToBeginning(earliest);
    }
    if (!newest.isEmpty()) {
      consumer.seekToEnd(newest);
    }
    for (TopicPartition partition : started.keySet()) {
      started.put(partition, consumer.position(partition));
    }
    commit(consumer, producer, started);
    observeEnds(consumer, partitions);
    return loop.once ? consumer.endOffsets(partitions) : Collections.emptyMap();
  }

  /** A source partition's copy: the progress group's positions are kept by these, as the Spark
   * engine's exactly-once writer keeps them (the same group, so either may go on from them). */
  private TopicPartition remote(TopicPartition partition) {
    return new TopicPartition(topics.get(partition.topic()), partition.partition());
  }

  private boolean reached(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> ends) {
    for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
      if (consumer.position(end.getKey()) < end.getValue()) {
        return false;
      }
    }
    return true;
  }

  private void observeEnds(KafkaConsumer<byte[], byte[]> consumer, Set<TopicPartition> partitions) {
    for (TopicPartition partition : partitions) {
      OptionalLong behind = consumer.currentLag(partition);
      if (behind.isPresent()) {
        latest.put(partition, consumer.position(partition) + behind.getAsLong());
      }
    }
  }
}
