package dev.topo.replication;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * Whether one partition should move from the slot copying the most bytes a second to the one
 * copying the fewest, and which: the leader's only reason to take a partition from a running slot
 * ({@link CopyLoop} moves it in two steps). Pure: the assignment and the measured rates in, a move
 * or null out.
 */
final class Rebalance {
  /** Below this many bytes a second, a slot is too light to be worth a pause of its partitions. */
  static final double FLOOR = 256 * 1024;

  /** A move must bring the busiest slot's load down by at least this share of it. */
  static final double MARGIN = 0.2;

  private Rebalance() {}

  /** One partition to take from slot {@code from} and give to slot {@code to}. */
  static final class Move {
    final TopicPartition partition;
    final int from;
    final int to;

    Move(TopicPartition partition, int from, int to) {
      this.partition = partition;
      this.from = from;
      this.to = to;
    }

    @Override
    public String toString() {
      return partition + " from copy slot " + from + " to copy slot " + to;
    }
  }

  /**
   * The move that best evens the busiest and the idlest slot of {@code assigned} (each slot's
   * partitions), by {@code rates} (bytes a second per partition): the busiest slot holds two
   * partitions or more and copies at least {@link #FLOOR}, and after the move neither slot copies
   * more than {@code 1 - MARGIN} of what the busiest did. Null when no move does that.
   */
  static Move pick(List<Set<TopicPartition>> assigned, Map<TopicPartition, Double> rates) {
    double total = 0;
    for (double rate : rates.values()) {
      total += rate;
    }
    if (total < FLOOR) {
      return null; // no slot can copy FLOOR: the common case, a quiet flow, costs its few rates
    }
    int busiest = -1;
    int idlest = -1;
    double[] loads = new double[assigned.size()];
    for (int i = 0; i < assigned.size(); i++) {
      for (TopicPartition partition : assigned.get(i)) {
        loads[i] += rates.getOrDefault(partition, 0.0);
      }
      if (busiest < 0 || loads[i] > loads[busiest]) {
        busiest = i;
      }
      if (idlest < 0 || loads[i] < loads[idlest]) {
        idlest = i;
      }
    }
    if (busiest < 0
        || busiest == idlest
        || assigned.get(busiest).size() < 2
        || loads[busiest] < FLOOR) {
      return null;
    }
    TopicPartition best = null;
    double bestAfter = Double.MAX_VALUE;
    Comparator<TopicPartition> order =
        Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);
    for (TopicPartition partition : assigned.get(busiest)) {
      double rate = rates.getOrDefault(partition, 0.0);
      double after = Math.max(loads[busiest] - rate, loads[idlest] + rate);
      if (after < bestAfter || (after == bestAfter && order.compare(partition, best) < 0)) {
        best = partition;
        bestAfter = after;
      }
    }
    if (bestAfter > loads[busiest] * (1 - MARGIN)) {
      return null;
    }
    return new Move(best, busiest, idlest);
  }
}
