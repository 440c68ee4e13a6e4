package dev.topo.replication;

import org.apache.kafka.common.TopicPartition;

/**
 * What a {@link CopyTask} needs from whoever runs it: its configuration, rules and figures, the
 * partitions it holds now and where a new one starts, and whether to stop. {@link Slot} is the one
 * host: a copy slot in a Spark task, taking its assignment from the flow's leader ({@link
 * CopyLoop}, in the driver).
 */
interface SlotHost {
  LoopConfig config();

  Hops hops();

  LoopFigures figures();

  /** The flow's record filter, or null: every record passing the loop rules is copied. */
  RecordFilter filter();

  /** The partitions the task holds now, with the topic map, as of one assignment version. */
  CopyLoop.Assignment assignment();

  /** Wait (a little) for an assignment newer than {@code seen}, or a stop. */
  void awaitChange(int seen) throws InterruptedException;

  /** Where a partition the task takes up starts, given its committed position (or null). */
  long start(TopicPartition partition, Long committed);

  /** Whether the task should commit what it copied and stop. */
  boolean stopping();

  /** Whether the task should stop at once and commit nothing more (it is fenced). */
  boolean halted();

  /** The task failed: the flow stops there. */
  void failed(Throwable problem);
}
