package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
