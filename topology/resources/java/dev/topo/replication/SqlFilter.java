package dev.topo.replication;

import java.util.Iterator;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Predicate$;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A flow's Spark SQL {@code filter} in the copy loop, as Spark's Kafka source would give it the
 * record: {@code key}, {@code value}, {@code topic}, {@code partition}, {@code offset}, {@code
 * timestamp}, {@code timestampType} and {@code headers} (null when the record has none, as the
 * source gives them). The driver resolves the expression once, with Spark's analyzer, over an empty
 * relation of those columns ({@code topology/spark/loop.py}); each slot compiles the resolved
 * expression once with Spark's own predicate (generated code, or interpreted where Spark falls
 * back) and evaluates it on each record.
 */
public final class SqlFilter implements RecordFilter {
  private static final long serialVersionUID = 1L;
  private final Expression condition;
  private final scala.collection.immutable.Seq<Attribute> input;
  private transient BasePredicate predicate;

  private SqlFilter(Expression condition, scala.collection.immutable.Seq<Attribute> input) {
    this.condition = condition;
    this.input = input;
  }

  /** The filter of a resolved {@code Filter} plan over the Kafka source's columns. */
  public static SqlFilter of(LogicalPlan analyzed) {
    if (!(analyzed instanceof Filter)) {
      throw new IllegalArgumentException(
          "the record filter did not resolve to a filter of the records: " + analyzed);
    }
    Filter filter = (Filter) analyzed;
    return new SqlFilter(filter.condition(), filter.child().output());
  }

  @Override
  public boolean keep(ConsumerRecord<byte[], byte[]> record) {
    if (predicate == null) {
      predicate = Predicate$.MODULE$.create(condition, input);
      predicate.initialize(0);
    }
    return predicate.eval(row(record));
  }

  /** The record as the Kafka source's row. */
  static InternalRow row(ConsumerRecord<byte[], byte[]> record) {
    Object headers = null;
    Iterator<Header> each = record.headers().iterator();
    if (each.hasNext()) {
      java.util.List<Object> found = new java.util.ArrayList<>();
      while (each.hasNext()) {
        Header header = each.next();
        found.add(
            new GenericInternalRow(
                new Object[] {UTF8String.fromString(header.key()), header.value()}));
      }
      headers = new GenericArrayData(found.toArray());
    }
    return new GenericInternalRow(
        new Object[] {
          record.key(),
          record.value(),
          UTF8String.fromString(record.topic()),
          record.partition(),
          record.offset(),
          record.timestamp() * 1000, // microseconds, as Spark keeps a timestamp
          record.timestampType().id,
          headers
        });
  }
}
