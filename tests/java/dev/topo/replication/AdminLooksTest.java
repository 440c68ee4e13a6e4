package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The running driver's topic-id and end looks ({@link AdminLooks}): the questions Python writes
 * (topology/spark/cluster_looks.py), an answer that says "no such topic" left out, any other
 * failure thrown as the client's own exception, and a cluster that does not answer thrown within
 * the timeout, not waited on.
 */
@Timeout(60)
class AdminLooksTest {
  private static <T> KafkaFuture<T> failed(Throwable problem) {
    KafkaFutureImpl<T> future = new KafkaFutureImpl<>();
    future.completeExceptionally(problem);
    return future;
  }

  @Test
  void theNamesAskedAreSortedWithoutBlanksOrRepeats() {
    assertEquals(List.of("a", "orders"), AdminLooks.names("orders\n\na\norders\n"));
    assertEquals(List.of(), AdminLooks.names(""));
  }

  @Test
  void thePartitionsAskedAreTopicAndNumberWithoutRepeats() {
    assertEquals(
        List.of(new TopicPartition("orders", 0), new TopicPartition("orders", 11)),
        AdminLooks.partitions("orders\t0\norders\t11\norders\t0\n\n"));
    assertThrows(IllegalArgumentException.class, () -> AdminLooks.partitions("orders\n"));
  }

  @Test
  void onlyThePartitionsTheirTopicsHaveAreAskedForTheirEnds() {
    List<TopicPartition> given =
        List.of(
            new TopicPartition("orders", 0),
            new TopicPartition("orders", 3), // made again with 2 partitions
            new TopicPartition("gone", 0), // deleted
            new TopicPartition("audit", 1));
    assertEquals(
        List.of(new TopicPartition("orders", 0), new TopicPartition("audit", 1)),
        AdminLooks.existing(given, Map.of("orders", 2, "gone", 0, "audit", 4)));
  }

  @Test
  void anAnswerIsItsValueAndNoSuchTopicIsNone() throws Exception {
    assertEquals("id", AdminLooks.answered(KafkaFuture.completedFuture("id"), 100));
    assertNull(AdminLooks.answered(failed(new UnknownTopicOrPartitionException("gone")), 100));
  }

  @Test
  void anyOtherFailureIsTheClientsOwnException() {
    TopicAuthorizationException refused = new TopicAuthorizationException("not allowed");
    KafkaException thrown =
        assertThrows(KafkaException.class, () -> AdminLooks.answered(failed(refused), 100));
    assertSame(refused, thrown);
    KafkaException wrapped =
        assertThrows(
            KafkaException.class,
            () -> AdminLooks.answered(failed(new IllegalStateException("odd")), 100));
    assertEquals("java.lang.IllegalStateException: odd", wrapped.getMessage());
  }

  @Test
  void aClusterThatDoesNotAnswerIsAnExceptionWithinTheTimeout() throws Exception {
    // Port 1 on this machine: nothing listens, so no answer ever comes.
    String settings = "{\"bootstrap.servers\": \"127.0.0.1:1\", \"reconnect.backoff.ms\": \"50\"}";
    try (AdminLooks looks = AdminLooks.open(settings)) {
      assertThrows(TimeoutException.class, () -> looks.ids("orders\n", 500));
      assertThrows(TimeoutException.class, () -> looks.ends("orders\t0\n", 500));
      assertEquals("", looks.ids("", 500));
      assertEquals("", looks.ends("", 500));
    }
  }
}
