package dev.topo.replication;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * What a copy loop copied since its last report, per source partition: records, their bytes, the
 * sum of their latencies and the newest source timestamp; and, over the flow, the latency sum and
 * the cumulative count of copies within each latency bound. {@link CopyLoop#report} takes them into
 * its versioned report, which {@code topology/progress.py} reads. Thread-safe.
 */
final class LoopFigures {
  static final int RECORDS = 0;
  static final int BYTES = 1;
  static final int LATENCY = 2;
  static final int NEWEST = 3;

  /**
   * Records a source partition no longer held when the copy came to them: offsets {@code from} (the
   * copy's position) to {@code to} (where the partition's log now starts, or ends), {@code kind}
   * "retention" (removed before they were copied) or "reset" (the log is behind the copy: the topic
   * was deleted and made again, or truncated).
   */
  static final class Loss {
    final TopicPartition partition;
    final String kind;
    final long from;
    final long to;

    Loss(TopicPartition partition, String kind, long from, long to) {
      this.partition = partition;
      this.kind = kind;
      this.from = from;
      this.to = to;
    }
  }

  /**
   * What one report takes: the flow's latency sum and buckets, each partition's figures, the
   * losses.
   */
  static final class Taken {
    final long latency;
    final long[] buckets;
    final Map<TopicPartition, long[]> partitions;
    final List<Loss> losses;

    Taken(long latency, long[] buckets, Map<TopicPartition, long[]> partitions, List<Loss> losses) {
      this.latency = latency;
      this.buckets = buckets;
      this.partitions = partitions;
      this.losses = losses;
    }
  }

  private final long[] boundsMs;
  private long records;
  private long latency;
  private long[] buckets;
  private Map<TopicPartition, long[]> partitions = new HashMap<>();
  private List<Loss> losses = new ArrayList<>();

  LoopFigures(long[] boundsMs) {
    this.boundsMs = boundsMs;
    this.buckets = new long[boundsMs.length];
  }

  /** One poll's records of one partition: counts, bytes, and the first `n` latencies. */
  synchronized void add(
      TopicPartition partition, long count, long size, long[] latencies, int n, long newest) {
    records += count;
    long[] mine = partitions.computeIfAbsent(partition, p -> new long[] {0, 0, 0, Long.MIN_VALUE});
    mine[RECORDS] += count;
    mine[BYTES] += size;
    for (int i = 0; i < n; i++) {
      long ms = latencies[i];
      latency += ms;
      mine[LATENCY] += ms;
      for (int b = 0; b < boundsMs.length; b++) {
        if (ms <= boundsMs[b]) {
          buckets[b]++;
        }
      }
    }
    mine[NEWEST] = Math.max(mine[NEWEST], newest);
  }

  /** What a copy slot took from its own figures, added to these (the leader's). */
  synchronized void absorb(Taken taken) {
    latency += taken.latency;
    for (int b = 0; b < boundsMs.length && b < taken.buckets.length; b++) {
      buckets[b] += taken.buckets[b];
    }
    taken.partitions.forEach(
        (partition, values) -> {
          long[] mine =
              partitions.computeIfAbsent(partition, p -> new long[] {0, 0, 0, Long.MIN_VALUE});
          mine[RECORDS] += values[RECORDS];
          mine[BYTES] += values[BYTES];
          mine[LATENCY] += values[LATENCY];
          mine[NEWEST] = Math.max(mine[NEWEST], values[NEWEST]);
          records += values[RECORDS];
        });
    losses.addAll(taken.losses);
  }

  /** A loss the copy found (see {@link Loss}). */
  synchronized void lost(Loss loss) {
    losses.add(loss);
  }

  /** The figures since the last call; every count starts again at 0. */
  synchronized Taken take() {
    Taken taken = new Taken(latency, buckets, partitions, losses);
    records = 0;
    latency = 0;
    buckets = new long[boundsMs.length];
    partitions = new HashMap<>();
    losses = new ArrayList<>();
    return taken;
  }

  synchronized long records() {
    return records;
  }

  /** Whether a loss waits to be reported. */
  synchronized boolean lossesWaiting() {
    return !losses.isEmpty();
  }
}
