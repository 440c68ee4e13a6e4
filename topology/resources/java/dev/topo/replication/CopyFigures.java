package dev.topo.replication;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.expressions.Aggregator;
import scala.Tuple3;

/**
 * A micro-batch's records, bytes, latency histogram and per-topic figures, in one pass over its
 * records.
 *
 * <p>topo's replication query observes this aggregate (Spark's {@code Dataset.observe}) for the
 * metrics endpoint; it is the query's only observed aggregate. Spelled in Spark SQL it took four
 * aggregates per topic and one per latency bucket, each evaluated on every record: the cost grew
 * with the topics a query reads. Here each record costs one array update whatever the number of
 * topics.
 *
 * <p>Input, per record: the index of its source topic (in the query's sorted topic list), its
 * size in bytes (key plus value) and its source timestamp (epoch milliseconds). Its latency is
 * the time its task began aggregating (taken once, when the task's buffer is made) minus that
 * timestamp, never below 0. (Not Spark's {@code current_timestamp()}: a micro-batch inlines the
 * batch's time into the generated code as a literal, so every batch would compile its code
 * anew, a cost paid per batch however few records it has.) Output: comma-separated decimal
 * numbers, read by {@code topology/telemetry/figures.py}: the records, their bytes, the latency
 * sum, then for each bound
 * the count of records whose latency is at most that bound (cumulative, as Prometheus' buckets),
 * then for each topic its records, bytes, latency sum and newest source timestamp (empty when
 * the batch had none of its records).
 */
public final class CopyFigures
    extends Aggregator<Tuple3<Integer, Long, Long>, long[], String> {
  private static final long NONE = Long.MIN_VALUE;
  private static final int PER_TOPIC = 4;
  private static final int RECORDS = 0;
  private static final int BYTES = 1;
  private static final int LATENCY = 2;
  private static final int BUCKETS = 3;

  private final int topics;
  private final long[] boundsMs;
  private transient long startedMs; // this task's: set by zero(), when its buffer is made

  public CopyFigures(int topics, long[] boundsMs) {
    this.topics = topics;
    this.boundsMs = boundsMs.clone();
  }

  private int topicBase() {
    return BUCKETS + boundsMs.length;
  }

  @Override
  public long[] zero() {
    startedMs = System.currentTimeMillis();
    long[] tally = new long[topicBase() + PER_TOPIC * topics];
    for (int topic = 0; topic < topics; topic++) {
      tally[topicBase() + PER_TOPIC * topic + 3] = NONE;
    }
    return tally;
  }

  @Override
  public long[] reduce(long[] tally, Tuple3<Integer, Long, Long> record) {
    long size = orZero(record._2());
    long timestamp = record._3() == null ? NONE : record._3();
    long latency = timestamp == NONE ? 0 : Math.max(0, startedMs - timestamp);
    tally[RECORDS]++;
    tally[BYTES] += size;
    tally[LATENCY] += latency;
    for (int bound = boundsMs.length - 1; bound >= 0 && latency <= boundsMs[bound]; bound--) {
      tally[BUCKETS + bound]++;
    }
    Integer topic = record._1();
    if (topic != null && topic >= 0 && topic < topics) {
      int at = topicBase() + PER_TOPIC * topic;
      tally[at]++;
      tally[at + 1] += size;
      tally[at + 2] += latency;
      tally[at + 3] = Math.max(tally[at + 3], timestamp);
    }
    return tally;
  }

  private static long orZero(Long value) {
    return value == null ? 0 : value;
  }

  @Override
  public long[] merge(long[] tally, long[] other) {
    for (int at = 0; at < tally.length; at++) {
      boolean newest = at >= topicBase() && (at - topicBase()) % PER_TOPIC == 3;
      tally[at] = newest ? Math.max(tally[at], other[at]) : tally[at] + other[at];
    }
    return tally;
  }

  @Override
  public String finish(long[] tally) {
    StringBuilder out = new StringBuilder(tally.length * 4);
    for (int at = 0; at < tally.length; at++) {
      if (at > 0) {
        out.append(',');
      }
      if (tally[at] != NONE) {
        out.append(tally[at]);
      }
    }
    return out.toString();
  }

  @Override
  public Encoder<long[]> bufferEncoder() {
    return Encoders.javaSerialization(long[].class);
  }

  @Override
  public Encoder<String> outputEncoder() {
    return Encoders.STRING();
  }
}
