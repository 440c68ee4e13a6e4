package dev.topo.replication;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Gives each record the timestamp of its source record.
 *
 * <p>Spark 4.1's Kafka sink has no timestamp column: it lets the producer stamp records with its
 * own clock. topo's replication query therefore appends the source timestamp (epoch milliseconds,
 * ASCII decimal) as a last header named {@value #HEADER}; this interceptor, running inside the
 * sink's producer, moves it into the record's timestamp and drops the header. Records without the
 * header pass through unchanged.
 */
public final class SourceTimestampInterceptor implements ProducerInterceptor<byte[], byte[]> {
  public static final String HEADER = "topo-source-timestamp";

  @Override
  public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
    Header[] headers = record.headers().toArray();
    int last = headers.length - 1;
    if (last < 0 || !HEADER.equals(headers[last].key()) || headers[last].value() == null) {
      return record;
    }
    long timestamp = Long.parseLong(new String(headers[last].value(), StandardCharsets.US_ASCII));
    RecordHeaders kept = new RecordHeaders();
    for (int i = 0; i < last; i++) {
      kept.add(headers[i]);
    }
    return new ProducerRecord<>(
        record.topic(), record.partition(), timestamp, record.key(), record.value(), kept);
  }

  @Override
  public void onAcknowledgement(RecordMetadata metadata, Exception exception) {}

  @Override
  public void close() {}

  @Override
  public void configure(Map<String, ?> configs) {}
}
