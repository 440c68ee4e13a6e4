package dev.topo.replication;

import java.io.Serializable;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A flow's record {@code filter}: whether a source record is copied. {@code SqlFilter} is the one
 * topo uses, Spark SQL evaluated by Spark's own expression engine; it travels to the executors with
 * the slot's task, so it is serializable.
 */
public interface RecordFilter extends Serializable {
  /** Whether the record is copied (a filter that says null says no, as SQL's WHERE does). */
  boolean keep(ConsumerRecord<byte[], byte[]> record);
}
