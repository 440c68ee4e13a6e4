package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The copy loop's figures: {@link CopyFigures}' output format ({@code
 * topology/telemetry/figures.py} reads both), taken and reset by each report.
 */
class LoopFiguresTest {
  private static final long[] BOUNDS = {10, 100, 1000};

  @Test
  void aReportHasTotalsCumulativeBucketsThenEachTopicInTheGivenOrder() {
    LoopFigures figures = new LoopFigures(BOUNDS);
    figures.add("orders", 2, 300, new long[] {5, 100}, 2, 1_700_000_000_000L);
    figures.add("clicks", 1, 40, new long[] {2000}, 1, 1_700_000_000_500L);
    figures.add("orders", 1, 10, new long[] {10}, 1, 1_699_999_999_000L);
    // records, bytes, latency sum; records with latency <= 10, <= 100, <= 1000 (a bound is
    // inclusive, 2000 is in none); then per topic records, bytes, latency sum, newest timestamp
    assertEquals(
        "4,350,2115,2,3,3," + "1,40,2000,1700000000500," + "3,310,115,1700000000000",
        figures.take(List.of("clicks", "orders")));
  }

  @Test
  void aTopicWithoutRecordsHasZerosAndNoNewestAndOneLeftOutCountsOnlyInTheTotals() {
    LoopFigures figures = new LoopFigures(BOUNDS);
    figures.add("orders", 1, 7, new long[] {50}, 1, 123L);
    figures.add("unlisted", 1, 3, new long[] {50}, 1, 456L);
    assertEquals("2,10,100,0,2,2,0,0,0,,1,7,50,123", figures.take(List.of("empty", "orders")));
    // no topics (a flow with too many to figure each): the totals alone
    figures.add("orders", 1, 7, new long[] {50}, 1, 123L);
    assertEquals("1,7,50,0,1,1", figures.take(List.of()));
  }

  @Test
  void takingResetsEverything() {
    LoopFigures figures = new LoopFigures(BOUNDS);
    figures.add("orders", 3, 30, new long[] {1, 2, 3}, 3, 99L);
    assertEquals(3, figures.records());
    figures.take(List.of("orders"));
    assertEquals(0, figures.records());
    assertEquals("0,0,0,0,0,0,0,0,0,", figures.take(List.of("orders")));
  }

  @Test
  void onlyTheFirstNLatenciesOfAPollAreCounted() {
    // CopyTask reuses one array per poll: what lies beyond `n` belongs to no copy
    LoopFigures figures = new LoopFigures(BOUNDS);
    figures.add("orders", 2, 20, new long[] {1, 2, 5000, 5000}, 2, 9L);
    assertEquals("2,20,3,2,2,2,2,20,3,9", figures.take(List.of("orders")));
  }
}
