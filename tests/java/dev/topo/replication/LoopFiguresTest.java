package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The copy loop's figures, per source partition, taken and reset by each report ({@code
 * CopyLoop.report}, which {@code topology/progress.py} reads).
 */
class LoopFiguresTest {
  private static final long[] BOUNDS = {10, 100, 1000};
  private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
  private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);
  private static final TopicPartition CLICKS_0 = new TopicPartition("clicks", 0);

  @Test
  void eachPartitionHasItsRecordsBytesLatencyAndNewestAndTheFlowItsBuckets() {
    LoopFigures figures = new LoopFigures(BOUNDS);
    figures.add(ORDERS_0, 2, 300, new long[] {5, 100}, 2, 1_700_000_000_000L);
    figures.add(CLICKS_0, 1, 40, new long[] {2000}, 1, 1_700_000_000_500L);
    figures.add(ORDERS_0, 1, 10, new long[] {10}, 1, 1_699_999_999_000L);
    figures.add(ORDERS_1, 1, 7, new long[] {50}, 1, 123L);
    LoopFigures.Taken taken = figures.take();
    // the latency sum; copies within <= 10, <= 100, <= 1000 ms (a bound is inclusive; 2000 is
    // in none)
    assertEquals(2165, taken.latency);
    assertArrayEquals(new long[] {2, 4, 4}, taken.buckets);
    assertArrayEquals(new long[] {3, 310, 115, 1_700_000_000_000L}, taken.partitions.get(ORDERS_0));
    assertArrayEquals(new long[] {1, 7, 50, 123L}, taken.partitions.get(ORDERS_1));
    assertArrayEquals(new long[] {1, 40, 2000, 1_700_000_000_500L}, taken.partitions.get(CLICKS_0));
  }

  @Test
  void takingResetsEverything() {
    LoopFigures figures = new LoopFigures(BOUNDS);
    figures.add(ORDERS_0, 3, 30, new long[] {1, 2, 3}, 3, 99L);
    assertEquals(3, figures.records());
    figures.take();
    assertEquals(0, figures.records());
    LoopFigures.Taken again = figures.take();
    assertEquals(0, again.latency);
    assertArrayEquals(new long[] {0, 0, 0}, again.buckets);
    assertTrue(again.partitions.isEmpty());
  }

  @Test
  void onlyTheFirstNLatenciesOfAPollAreCounted() {
    // CopyTask reuses one array per poll: what lies beyond `n` belongs to no copy
    LoopFigures figures = new LoopFigures(BOUNDS);
    figures.add(ORDERS_0, 2, 20, new long[] {1, 2, 5000, 5000}, 2, 9L);
    LoopFigures.Taken taken = figures.take();
    assertEquals(3, taken.latency);
    assertArrayEquals(new long[] {2, 2, 2}, taken.buckets);
    assertArrayEquals(new long[] {2, 20, 3, 9L}, taken.partitions.get(ORDERS_0));
  }
}
