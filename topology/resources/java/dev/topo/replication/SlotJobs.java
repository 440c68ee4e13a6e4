package dev.topo.replication;

import java.util.Collections;
import java.util.Iterator;
import java.util.concurrent.ExecutionException;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaFutureAction;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.VoidFunction;

/**
 * Copy slots as Spark tasks: each launch is a single-task job whose task runs {@link Slot#run} in
 * an executor's JVM for as long as the slot runs, as Spark's own receivers run. A retry of that
 * task by Spark does nothing: the leader ({@link CopyLoop}) decides when and where a slot runs
 * again, so a slot's failures never count towards aborting anything but its own job. Cancelling a
 * slot interrupts its task.
 */
public final class SlotJobs implements Launcher {
  private final JavaSparkContext spark;
  private final RecordFilter filter;

  /** Slots of a flow whose record filter is {@code filter} (null: none). */
  public SlotJobs(JavaSparkContext spark, RecordFilter filter) {
    this.spark = spark;
    this.filter = filter;
  }

  @Override
  public Launched launch(String flow, String run, int slot, int attempt, String config) {
    spark.setLocalProperty("spark.job.interruptOnCancel", "true");
    spark.setJobDescription(
        "topo copy slot " + slot + " of " + flow + " (attempt " + attempt + ")");
    JavaFutureAction<Void> job =
        spark
            .parallelize(Collections.singletonList(slot), 1)
            .foreachPartitionAsync(new Body(flow, run, slot, attempt, config, filter));
    return new Launched() {
      @Override
      public boolean isDone() {
        return job.isDone();
      }

      @Override
      public String failure() {
        if (!job.isDone() || job.isCancelled()) {
          return null;
        }
        try {
          job.get();
          return null;
        } catch (ExecutionException failed) {
          Throwable cause = failed.getCause() == null ? failed : failed.getCause();
          return cause.getClass().getSimpleName() + ": " + cause.getMessage();
        } catch (Exception other) {
          return other.toString();
        }
      }

      @Override
      public void cancel() {
        job.cancel(true);
      }
    };
  }

  /** The slot's task: attempt 0 only (see the class's comment). */
  static final class Body implements VoidFunction<Iterator<Integer>> {
    private static final long serialVersionUID = 1L;
    private final String flow;
    private final String run;
    private final int slot;
    private final int attempt;
    private final String config;
    private final RecordFilter filter;

    Body(String flow, String run, int slot, int attempt, String config, RecordFilter filter) {
      this.filter = filter;
      this.flow = flow;
      this.run = run;
      this.slot = slot;
      this.attempt = attempt;
      this.config = config;
    }

    @Override
    public void call(Iterator<Integer> ignored) throws Exception {
      if (TaskContext.get().attemptNumber() > 0) {
        throw new IllegalStateException(
            "copy slot " + slot + " runs again when its leader says so, not as a Spark retry");
      }
      // In the executor's log, where each slot runs (not with the local runner: its one
      // executor is the driver, whose output is the user's terminal with --once).
      String executor = SparkEnv.get().executorId();
      if (!"driver".equals(executor)) {
        System.err.println(
            "topo: "
                + flow
                + ": copy slot "
                + slot
                + " runs on executor "
                + executor
                + " (attempt "
                + attempt
                + ")");
      }
      Slot.run(config, run, slot, attempt, SlotPlugin.channel(), filter);
    }
  }
}
