package dev.topo.replication;

/**
 * How a flow's leader ({@link CopyLoop}) starts its copy slots: each launch is one attempt of one
 * slot, running {@link Slot#run} somewhere until it ends. {@code SlotJobs} launches each as a
 * single-task Spark job on the executors; tests launch them as threads.
 */
public interface Launcher {
  /** Start attempt {@code attempt} of slot {@code slot} of the flow led by {@code run}. */
  Launched launch(String flow, String run, int slot, int attempt, String config);

  /** One launched slot attempt. */
  interface Launched {
    /** Whether it has ended, however it did. */
    boolean isDone();

    /** Why it ended other than by returning (its job failed), or null. */
    String failure();

    /** End it now (its Spark task is killed). */
    void cancel();
  }
}
