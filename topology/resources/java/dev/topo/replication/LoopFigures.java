package dev.topo.replication;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a copy loop copied since its last report, in {@link CopyFigures}' output format (its Java
 * source says what each number is; {@code topology/telemetry/figures.py} reads it): the records,
 * their bytes and latency sum, the cumulative latency buckets, then per topic its records, bytes,
 * latency sum and newest source timestamp. Topics are kept by name, so a report can number them in
 * whatever order the flow's topic list has when it is taken. Thread-safe.
 */
final class LoopFigures {
  private static final int RECORDS = 0;
  private static final int BYTES = 1;
  private static final int LATENCY = 2;
  private static final int NEWEST = 3;

  private final long[] boundsMs;
  private long records;
  private long bytes;
  private long latency;
  private long[] buckets;
  private Map<String, long[]> topics = new HashMap<>();

  LoopFigures(long[] boundsMs) {
    this.boundsMs = boundsMs;
    this.buckets = new long[boundsMs.length];
  }

  /** One poll's records of one topic: counts, bytes, and each record's latency. */
  synchronized void add(String topic, long count, long size, long[] latencies, int n, long newest) {
    records += count;
    bytes += size;
    long[] mine = topics.computeIfAbsent(topic, t -> new long[] {0, 0, 0, Long.MIN_VALUE});
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

  /** The packed figures since the last call, per topic in `order` (none when it is empty). */
  synchronized String take(List<String> order) {
    StringBuilder out = new StringBuilder();
    out.append(records).append(',').append(bytes).append(',').append(latency);
    for (long count : buckets) {
      out.append(',').append(count);
    }
    for (String topic : order) {
      long[] mine = topics.get(topic);
      if (mine == null) {
        out.append(",0,0,0,");
      } else {
        out.append(',').append(mine[RECORDS]).append(',').append(mine[BYTES]);
        out.append(',').append(mine[LATENCY]).append(',');
        if (mine[NEWEST] != Long.MIN_VALUE) {
          out.append(mine[NEWEST]);
        }
      }
    }
    records = 0;
    bytes = 0;
    latency = 0;
    buckets = new long[boundsMs.length];
    topics = new HashMap<>();
    return out.toString();
  }

  synchronized long records() {
    return records;
  }
}
