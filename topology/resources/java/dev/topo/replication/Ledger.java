package dev.topo.replication;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * A copy thread's positions in the flow's progress group on the target: a consumer of the target
 * with the group's id, on a thread of its own, so that committing (a round trip to the group's
 * coordinator) never holds up the copy. At most one commit is in flight; the copy thread asks for
 * the next one when it is done ({@link #commitLater}) and waits only when it must ({@link #commit}:
 * before it takes other partitions, and when it stops).
 */
final class Ledger {
  private static final Duration CLOSE = Duration.ofSeconds(10);

  private final ExecutorService thread;
  private final Consumer<byte[], byte[]> consumer;
  private final ConsumerGroupMetadata group;
  private Future<?> inFlight;

  Ledger(Map<String, Object> settings, String name) throws Exception {
    this(() -> new KafkaConsumer<byte[], byte[]>(settings), name);
  }

  /** A ledger over the consumer {@code make} makes (on the ledger's thread, where it is used). */
  Ledger(Supplier<Consumer<byte[], byte[]>> make, String name) throws Exception {
    thread =
        Executors.newSingleThreadExecutor(
            work -> {
              Thread made = new Thread(work, name);
              made.setDaemon(true);
              return made;
            });
    try {
      consumer = await(thread.submit(make::get));
      group = await(thread.submit(consumer::groupMetadata));
    } catch (Exception problem) {
      thread.shutdownNow();
      throw problem;
    }
  }

  /** The group, as a transaction's offsets are sent with (constant: no member, no generation). */
  ConsumerGroupMetadata group() {
    return group;
  }

  /** The positions committed for these partitions (null for one without). */
  Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions)
      throws Exception {
    return await(thread.submit(() -> consumer.committed(partitions)));
  }

  /** Commit these positions and wait for it (after the commit in flight, if any). */
  void commit(Map<TopicPartition, OffsetAndMetadata> offsets) throws Exception {
    settle();
    await(thread.submit(() -> consumer.commitSync(offsets)));
  }

  /**
   * Start committing these positions, `then` once they are; false (nothing done) while the last
   * commit is still in flight. A commit that failed is thrown here, on the copy thread.
   */
  boolean commitLater(Map<TopicPartition, OffsetAndMetadata> offsets, Runnable then)
      throws Exception {
    if (committing()) {
      return false;
    }
    settle();
    inFlight =
        thread.submit(
            () -> {
              consumer.commitSync(offsets);
              then.run();
            });
    return true;
  }

  /** Whether a commit is in flight. */
  boolean committing() {
    return inFlight != null && !inFlight.isDone();
  }

  /** Wait for the commit in flight; throw if it failed. */
  void settle() throws Exception {
    Future<?> last = inFlight;
    inFlight = null;
    if (last != null) {
      await(last);
    }
  }

  void close() {
    consumer.wakeup(); // a commit still waiting gives up now (the only thread-safe call)
    try {
      thread
          .submit(() -> consumer.close(CLOSE))
          .get(CLOSE.toMillis() + 5000, TimeUnit.MILLISECONDS);
    } catch (Exception ignored) {
      // closing after a failure: what failed is reported already
    } finally {
      thread.shutdownNow();
    }
  }

  private static <T> T await(Future<T> future) throws Exception {
    try {
      return future.get();
    } catch (ExecutionException wrapped) {
      Throwable cause = wrapped.getCause();
      throw cause instanceof Exception ? (Exception) cause : wrapped;
    }
  }
}
