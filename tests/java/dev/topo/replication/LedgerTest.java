package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A copy thread's positions in the progress group ({@link Ledger}): every consumer call on the
 * ledger's own thread, at most one commit in flight, commits in the order asked, a failed commit
 * thrown on the copy thread, and a stuck commit given up when the ledger closes.
 */
@Timeout(30) // a ledger that waits for ever fails its test instead of hanging the build
class LedgerTest {
  private static final TopicPartition ORDERS_0 = new TopicPartition("east.orders", 0);
  private static final TopicPartition ORDERS_1 = new TopicPartition("east.orders", 1);
  private static final Duration SOON = Duration.ofSeconds(10);

  /**
   * The progress group's consumer: commits kept as the group would keep them, each call's thread
   * noted; a commit may be held until released, or fail.
   */
  @SuppressWarnings("deprecation") // the enum constructor: kafka-clients 3.9 has no other
  static final class Progress extends MockConsumer<byte[], byte[]> {
    final Map<TopicPartition, OffsetAndMetadata> kept = new HashMap<>();
    final List<Map<TopicPartition, OffsetAndMetadata>> commits =
        Collections.synchronizedList(new ArrayList<>());
    final Set<String> threads = Collections.synchronizedSet(new HashSet<>());
    volatile CountDownLatch hold;
    final CountDownLatch held = new CountDownLatch(1);
    volatile RuntimeException failWith;
    final AtomicBoolean wokenUp = new AtomicBoolean();
    final AtomicInteger closed = new AtomicInteger();

    Progress() {
      super(OffsetResetStrategy.EARLIEST);
    }

    private void note() {
      threads.add(Thread.currentThread().getName());
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
      note();
      CountDownLatch waitFor = hold;
      if (waitFor != null) {
        held.countDown();
        try {
          while (!waitFor.await(10, TimeUnit.MILLISECONDS)) {
            if (wokenUp.get()) {
              throw new WakeupException();
            }
          }
        } catch (InterruptedException stopped) {
          Thread.currentThread().interrupt();
          throw new WakeupException();
        }
      }
      RuntimeException failure = failWith;
      if (failure != null) {
        failWith = null;
        throw failure;
      }
      commits.add(new HashMap<>(offsets));
      synchronized (kept) {
        kept.putAll(offsets);
      }
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
      note();
      Map<TopicPartition, OffsetAndMetadata> found = new HashMap<>();
      synchronized (kept) {
        for (TopicPartition partition : partitions) {
          found.put(partition, kept.get(partition)); // null: none committed, as Kafka answers
        }
      }
      return found;
    }

    @Override
    public ConsumerGroupMetadata groupMetadata() {
      note();
      return new ConsumerGroupMetadata("topo-eos.shop.east--west");
    }

    @Override
    public void wakeup() {
      wokenUp.set(true); // called from the closing thread: the only thread-safe call
    }

    @Override
    public void close(Duration timeout) {
      note();
      closed.incrementAndGet();
    }
  }

  private final Progress progress = new Progress();
  private Ledger ledger;

  private Ledger ledger() throws Exception {
    ledger = new Ledger(() -> progress, "copy-0-progress");
    return ledger;
  }

  @AfterEach
  void close() {
    if (ledger != null) {
      ledger.close();
    }
  }

  private static Map<TopicPartition, OffsetAndMetadata> at(TopicPartition partition, long offset) {
    return Map.of(partition, new OffsetAndMetadata(offset));
  }

  @Test
  void positionsCommittedAreReadBackAndAPartitionWithoutOneIsNull() throws Exception {
    Ledger ledger = ledger();
    ledger.commit(at(ORDERS_0, 42));
    Map<TopicPartition, OffsetAndMetadata> read = ledger.committed(Set.of(ORDERS_0, ORDERS_1));
    assertEquals(42, read.get(ORDERS_0).offset());
    assertNull(read.get(ORDERS_1));
    assertEquals("topo-eos.shop.east--west", ledger.group().groupId());
  }

  @Test
  void everyCallOnTheConsumerRunsOnTheLedgersOwnThread() throws Exception {
    Ledger ledger = ledger();
    ledger.commit(at(ORDERS_0, 1));
    assertTrue(ledger.commitLater(at(ORDERS_0, 2), () -> {}));
    ledger.settle();
    ledger.committed(Set.of(ORDERS_0));
    ledger.close();
    ledger = null;
    assertEquals(Set.of("copy-0-progress"), progress.threads); // KafkaConsumer is single-threaded
    assertEquals(1, progress.closed.get());
  }

  @Test
  void oneCommitAtATimeAndItsFollowUpRunsOnlyOnceItIsMade() throws Exception {
    Ledger ledger = ledger();
    progress.hold = new CountDownLatch(1);
    AtomicBoolean done = new AtomicBoolean();
    assertTrue(ledger.commitLater(at(ORDERS_0, 10), () -> done.set(true)));
    assertTrue(progress.held.await(SOON.toSeconds(), TimeUnit.SECONDS));
    // still in flight: the next is refused, nothing is sent, the follow-up has not run
    assertFalse(ledger.commitLater(at(ORDERS_0, 20), () -> {}));
    assertFalse(done.get());
    CountDownLatch release = progress.hold;
    progress.hold = null;
    release.countDown();
    ledger.settle();
    assertTrue(done.get());
    assertEquals(List.of(at(ORDERS_0, 10)), progress.commits);
    assertTrue(ledger.commitLater(at(ORDERS_0, 20), () -> {}));
    ledger.settle();
    assertEquals(List.of(at(ORDERS_0, 10), at(ORDERS_0, 20)), progress.commits);
  }

  @Test
  void aCommitWaitsForTheOneInFlightSoPositionsNeverGoBack() throws Exception {
    Ledger ledger = ledger();
    progress.hold = new CountDownLatch(1);
    assertTrue(ledger.commitLater(at(ORDERS_0, 10), () -> {}));
    assertTrue(progress.held.await(SOON.toSeconds(), TimeUnit.SECONDS));
    CountDownLatch release = progress.hold;
    Thread releaser =
        new Thread(
            () -> {
              try {
                Thread.sleep(100);
              } catch (InterruptedException ignored) {
                return;
              }
              progress.hold = null;
              release.countDown();
            });
    releaser.start();
    ledger.commit(at(ORDERS_0, 30)); // returns once both are made, in the order asked
    assertEquals(List.of(at(ORDERS_0, 10), at(ORDERS_0, 30)), progress.commits);
    assertEquals(30, ledger.committed(Set.of(ORDERS_0)).get(ORDERS_0).offset());
    releaser.join();
  }

  @Test
  void aCommitThatFailedInTheBackgroundIsThrownOnTheCopyThreadAsItself() throws Exception {
    Ledger ledger = ledger();
    KafkaException refused = new KafkaException("the coordinator refused the commit");
    progress.failWith = refused;
    AtomicBoolean done = new AtomicBoolean();
    assertTrue(ledger.commitLater(at(ORDERS_0, 10), () -> done.set(true)));
    Exception thrown = assertThrows(Exception.class, ledger::settle);
    assertSame(refused, thrown); // not wrapped in an ExecutionException
    assertFalse(done.get()); // the positions it carried are not taken as committed
    ledger.settle(); // thrown once
    assertTrue(progress.commits.isEmpty());
  }

  @Test
  void aCommitAfterOneThatFailedThrowsThatFailureAndCommitsNothing() throws Exception {
    Ledger ledger = ledger();
    KafkaException refused = new KafkaException("the coordinator refused the commit");
    progress.failWith = refused;
    assertTrue(ledger.commitLater(at(ORDERS_0, 10), () -> {}));
    // positions after a failed commit would skip what the failed one was to record
    assertSame(refused, assertThrows(Exception.class, () -> ledger.commit(at(ORDERS_0, 30))));
    assertTrue(progress.commits.isEmpty());
  }

  @Test
  void aFailedCommitLaterIsThrownByTheNextAskInsteadOfBeingLost() throws Exception {
    Ledger ledger = ledger();
    KafkaException refused = new KafkaException("rebalance in progress");
    progress.failWith = refused;
    assertTrue(ledger.commitLater(at(ORDERS_0, 10), () -> {}));
    // whatever the copy thread asks next, it learns of the failure
    Exception thrown = assertThrows(Exception.class, () -> awaitThrown(ledger));
    assertSame(refused, thrown);
  }

  private static void awaitThrown(Ledger ledger) throws Exception {
    long until = System.nanoTime() + SOON.toNanos();
    while (System.nanoTime() < until) {
      ledger.commitLater(at(ORDERS_1, 1), () -> {}); // throws once the first one has failed
      Thread.sleep(5);
    }
  }

  @Test
  void closingGivesUpACommitStuckWaitingForTheGroup() throws Exception {
    Ledger ledger = ledger();
    progress.hold = new CountDownLatch(1); // never released: a coordinator that never answers
    assertTrue(ledger.commitLater(at(ORDERS_0, 10), () -> {}));
    assertTrue(progress.held.await(SOON.toSeconds(), TimeUnit.SECONDS));
    assertTimeoutPreemptively(Duration.ofSeconds(5), ledger::close);
    this.ledger = null;
    assertTrue(progress.wokenUp.get());
    assertEquals(1, progress.closed.get());
    assertTrue(progress.commits.isEmpty());
  }

  @Test
  void aConsumerThatCannotBeMadeFailsTheLedgerAndLeavesNoThread() throws Exception {
    KafkaException bad = new KafkaException("Failed to construct kafka consumer");
    Exception thrown =
        assertThrows(
            Exception.class,
            () ->
                new Ledger(
                    () -> {
                      throw bad;
                    },
                    "copy-1-progress"));
    assertSame(bad, thrown);
    long until = System.nanoTime() + SOON.toNanos();
    while (ledgerThreadAlive("copy-1-progress") && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertFalse(ledgerThreadAlive("copy-1-progress"), "the ledger's thread is stopped");
  }

  private static boolean ledgerThreadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(thread -> thread.getName().equals(name) && thread.isAlive());
  }
}
