package dev.topo.replication;

import java.util.HashMap;
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

  /** What one report takes: the flow's latency sum and buckets, and each partition's figures. */
  static final class Taken {
    final long latency;
    final long[] buckets;
    final Map<TopicPartition, long[]> partitions;

    Taken(long latency, long[] buckets, Map<TopicPartition, long[]> partitions) {
      this.latency = latency;
      this.buckets = buckets;
      this.partitions = partitions;
    }
  }

  private final long[] boundsMs;
  private long records;
  private long latency;
  private long[] buckets;
  private Map<TopicPartition, long[]> partitions = new HashMap<>();

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

  /** The figures since the last call; every count starts again at 0. */
  synchronized Taken take() {
    Taken taken = new Taken(latency, buckets, partitions);
    records = 0;
    latency = 0;
    buckets = new long[boundsMs.length];
    partitions = new HashMap<>();
    return taken;
  }

  synchronized long records() {
    return records;
  }
}
