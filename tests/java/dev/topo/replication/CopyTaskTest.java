package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class CopyTaskTest {
  @Test
  void aSlotIsBehindWhileMoreIsLeftThanAPollTook() {
    assertTrue(CopyTask.behind(1_000, 250_000)); // a backlog
    assertTrue(CopyTask.behind(1_000, 1_000));
    assertFalse(CopyTask.behind(3, 1)); // caught up, a few records arriving
    assertFalse(CopyTask.behind(0, 0));
    assertFalse(CopyTask.behind(0, 500)); // an empty poll says nothing of a backlog
  }

  @Test
  void anIdleSlotWakesSeldomAndOneWithPositionsToCommitWakesWhenTheCommitIsDue() {
    // nothing waits to be committed: the longest wait (records end a poll at once anyway)
    assertEquals(CopyTask.IDLE_POLL_MS, CopyTask.pollMs(10_000, 9_990, 100, false));
    // exactly-once, a transaction open: until its commit is due, 100 ms after the last
    assertEquals(90, CopyTask.pollMs(10_000, 9_990, 100, true));
    assertEquals(0, CopyTask.pollMs(10_000, 9_000, 100, true)); // overdue: at once
    // at-least-once, copies waiting to be acknowledged and committed each second
    assertEquals(600, CopyTask.pollMs(10_000, 9_600, 1_000, true));
    assertEquals(CopyTask.IDLE_POLL_MS, CopyTask.pollMs(10_000, 10_000, 60_000, true));
  }

  @Test
  void heartbeatsAloneWaitToBeCommittedAndAnyOtherPartitionCommitsThemToo() {
    Predicate<String> heartbeats = topic -> topic.endsWith("heartbeats");
    TopicPartition beat = new TopicPartition("east.heartbeats", 0);
    TopicPartition orders = new TopicPartition("orders", 1);
    long wait = CopyTask.HEARTBEATS_COMMIT_MS;
    assertTrue(CopyTask.canWait(Set.of(beat), heartbeats, 1_000));
    assertTrue(CopyTask.canWait(Set.of(beat), heartbeats, wait - 1));
    assertFalse(CopyTask.canWait(Set.of(beat), heartbeats, wait)); // waited long enough
    assertFalse(CopyTask.canWait(Set.of(beat, orders), heartbeats, 1_000)); // with another's
    assertFalse(CopyTask.canWait(Set.of(orders), heartbeats, 1_000));
  }
}
