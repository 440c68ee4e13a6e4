package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class RebalanceTest {
  private static final TopicPartition A = new TopicPartition("orders", 0);
  private static final TopicPartition B = new TopicPartition("orders", 1);
  private static final TopicPartition C = new TopicPartition("orders", 2);
  private static final double MIB = 1024 * 1024;

  @Test
  void twoHotPartitionsInOneSlotAreMovedApart() {
    TopicPartition d = new TopicPartition("clicks", 0);
    Rebalance.Move move =
        Rebalance.pick(
            List.of(Set.of(A, B, C), Set.of(d)), Map.of(A, 2 * MIB, B, 1 * MIB, C, 1 * MIB));
    assertEquals(A, move.partition, "the one that evens the two slots best: 2 and 2");
    assertEquals(0, move.from);
    assertEquals(1, move.to);
  }

  @Test
  void noMoveWhenItWouldNotHelpEnoughOrTheLoadIsLight() {
    // one hot partition alone in its slot: moving it only moves the problem
    assertNull(Rebalance.pick(List.of(Set.of(A, B), Set.of(C)), Map.of(A, 4 * MIB)));
    // already even
    assertNull(
        Rebalance.pick(
            List.of(Set.of(A, B), Set.of(C)), Map.of(A, 1 * MIB, B, 1 * MIB, C, 2 * MIB)));
    // under the floor: not worth pausing a partition
    assertNull(
        Rebalance.pick(List.of(Set.of(A, B), Set.of(C)), Map.of(A, 100_000.0, B, 100_000.0)));
    // one slot, or nothing assigned
    assertNull(Rebalance.pick(List.of(Set.of(A, B)), Map.of(A, 2 * MIB, B, 2 * MIB)));
    assertNull(Rebalance.pick(List.of(), Map.of()));
  }
}
