package dev.topo.replication;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.ImperativeAggregate;
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;

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
 * <p>A Catalyst aggregate function (a {@code TypedImperativeAggregate}), not a typed {@code
 * Aggregator}: it reads its three inputs straight from each record's row, where an {@code
 * Aggregator} has Spark project them into a new row and then build a boxed {@code Tuple3} from it,
 * for every record (two thirds of its time in a flight recording of a bulk copy). {@link #register}
 * names it in a session's function registry; its buffer, a {@code long[]}, is serialised as 8 bytes
 * a number when a task sends it to the driver.
 *
 * <p>Input, per record: the index of its source topic (in the query's sorted topic list), its size
 * in bytes (key plus value) and its source timestamp (epoch milliseconds). Its latency is the time
 * its task began aggregating (taken once, when the task's buffer is made) minus that timestamp,
 * never below 0. (Not Spark's {@code current_timestamp()}: a micro-batch inlines the batch's time
 * into the generated code as a literal, so every batch would compile its code anew, a cost paid per
 * batch however few records it has.) Output: comma-separated decimal numbers, read by {@code
 * topology/telemetry/figures.py}: the records, their bytes, the latency sum, then for each bound
 * the count of records whose latency is at most that bound (cumulative, as Prometheus' buckets),
 * then for each topic its records, bytes, latency sum and newest source timestamp (empty when the
 * batch had none of its records).
 */
public final class CopyFigures extends TypedImperativeAggregate<long[]>
    implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
  private static final long NONE = Long.MIN_VALUE;
  private static final int PER_TOPIC = 4;
  private static final int RECORDS = 0;
  private static final int BYTES = 1;
  private static final int LATENCY = 2;
  private static final int BUCKETS = 3;

  private final Seq<Expression> inputs;
  private final int topics;
  private final long[] boundsMs;
  private final int mutableOffset;
  private final int inputOffset;
  private final int[] ordinals; // each input's column in the row, or -1: evaluated
  private transient long startedMs; // this task's: set when its buffer is made

  public CopyFigures(
      Seq<Expression> inputs, int topics, long[] boundsMs, int mutableOffset, int inputOffset) {
    if (inputs.size() != 3) {
      throw new IllegalArgumentException("CopyFigures takes (topic index, size, timestamp)");
    }
    this.inputs = inputs;
    this.topics = topics;
    this.boundsMs = boundsMs.clone();
    this.mutableOffset = mutableOffset;
    this.inputOffset = inputOffset;
    this.ordinals = new int[3];
    for (int input = 0; input < 3; input++) {
      Expression expression = inputs.apply(input);
      ordinals[input] =
          expression instanceof BoundReference ? ((BoundReference) expression).ordinal() : -1;
    }
  }

  /** Names the aggregate `name` in `spark`'s function registry, for queries of `topics`. */
  public static void register(SparkSession spark, String name, int topics, long[] boundsMs) {
    spark
        .sessionState()
        .functionRegistry()
        .createOrReplaceTempFunction(
            name, inputs -> new CopyFigures(inputs, topics, boundsMs, 0, 0), "java_udf");
  }

  private int topicBase() {
    return BUCKETS + boundsMs.length;
  }

  @Override
  public long[] createAggregationBuffer() {
    startedMs = System.currentTimeMillis();
    long[] tally = new long[topicBase() + PER_TOPIC * topics];
    for (int topic = 0; topic < topics; topic++) {
      tally[topicBase() + PER_TOPIC * topic + 3] = NONE;
    }
    return tally;
  }

  @Override
  public long[] update(long[] tally, InternalRow row) {
    long size = asLong(1, row, 0);
    long timestamp = asLong(2, row, NONE);
    long latency = timestamp == NONE ? 0 : Math.max(0, startedMs - timestamp);
    tally[RECORDS]++;
    tally[BYTES] += size;
    tally[LATENCY] += latency;
    for (int bound = boundsMs.length - 1; bound >= 0 && latency <= boundsMs[bound]; bound--) {
      tally[BUCKETS + bound]++;
    }
    long topic = asLong(0, row, -1);
    if (topic >= 0 && topic < topics) {
      int at = topicBase() + PER_TOPIC * (int) topic;
      tally[at]++;
      tally[at + 1] += size;
      tally[at + 2] += latency;
      tally[at + 3] = Math.max(tally[at + 3], timestamp);
    }
    return tally;
  }

  private long asLong(int input, InternalRow row, long orElse) {
    int ordinal = ordinals[input];
    if (ordinal >= 0) {
      if (row.isNullAt(ordinal)) {
        return orElse;
      }
      return input == 0 ? row.getInt(ordinal) : row.getLong(ordinal);
    }
    Object value = inputs.apply(input).eval(row);
    return value == null ? orElse : ((Number) value).longValue();
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
  public Object eval(long[] tally) {
    StringBuilder out = new StringBuilder(tally.length * 4);
    for (int at = 0; at < tally.length; at++) {
      if (at > 0) {
        out.append(',');
      }
      if (tally[at] != NONE) {
        out.append(tally[at]);
      }
    }
    return UTF8String.fromString(out.toString());
  }

  @Override
  public byte[] serialize(long[] tally) {
    ByteBuffer bytes = ByteBuffer.allocate(Long.BYTES * tally.length);
    bytes.asLongBuffer().put(tally);
    return bytes.array();
  }

  @Override
  public long[] deserialize(byte[] bytes) {
    long[] tally = new long[bytes.length / Long.BYTES];
    ByteBuffer.wrap(bytes).asLongBuffer().get(tally);
    return tally;
  }

  @Override
  public int mutableAggBufferOffset() {
    return mutableOffset;
  }

  @Override
  public int inputAggBufferOffset() {
    return inputOffset;
  }

  @Override
  public ImperativeAggregate withNewMutableAggBufferOffset(int offset) {
    return new CopyFigures(inputs, topics, boundsMs, offset, inputOffset);
  }

  @Override
  public ImperativeAggregate withNewInputAggBufferOffset(int offset) {
    return new CopyFigures(inputs, topics, boundsMs, mutableOffset, offset);
  }

  @Override
  public Seq<Expression> children() {
    return inputs;
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return new CopyFigures(children, topics, boundsMs, mutableOffset, inputOffset);
  }

  /** (int, bigint, bigint), as `update` reads them: anything else is refused at analysis. */
  @Override
  public TypeCheckResult checkInputDataTypes() {
    DataType[] expected = {DataTypes.IntegerType, DataTypes.LongType, DataTypes.LongType};
    for (int input = 0; input < expected.length; input++) {
      DataType given = inputs.apply(input).dataType();
      if (!given.equals(expected[input])) {
        return new TypeCheckResult.TypeCheckFailure(
            prettyName() + " takes (int, bigint, bigint); input " + input + " is " + given);
      }
    }
    return TypeCheckResult.TypeCheckSuccess$.MODULE$;
  }

  @Override
  public boolean nullable() {
    return false;
  }

  @Override
  public DataType dataType() {
    return DataTypes.StringType;
  }

  @Override
  public String prettyName() {
    return "topo_copy_figures";
  }

  @Override
  public int productArity() {
    return 5;
  }

  @Override
  public Object productElement(int n) {
    switch (n) {
      case 0:
        return inputs;
      case 1:
        return topics;
      case 2:
        return boundsMs;
      case 3:
        return mutableOffset;
      case 4:
        return inputOffset;
      default:
        throw new IndexOutOfBoundsException(n);
    }
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof CopyFigures;
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof CopyFigures)) {
      return false;
    }
    CopyFigures that = (CopyFigures) other;
    return inputs.equals(that.inputs)
        && topics == that.topics
        && Arrays.equals(boundsMs, that.boundsMs)
        && mutableOffset == that.mutableOffset
        && inputOffset == that.inputOffset;
  }

  @Override
  public int hashCode() {
    return inputs.hashCode() * 31
        + topics * 7
        + Arrays.hashCode(boundsMs)
        + mutableOffset
        + inputOffset * 13;
  }
}
