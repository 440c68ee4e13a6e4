package dev.topo.replication;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * One copy slot: a {@link CopyTask} (a consumer of some of a flow's source partitions feeding a
 * producer to the target) running in a Spark task, in an executor's JVM, for as long as the flow
 * runs. Its partitions come from the flow's leader ({@link CopyLoop}, in the driver), asked every
 * {@link #TALK_MS} over a {@link Channel} (every {@link #IDLE_TALK_MS} while it reads a trickle at
 * most); each ask carries what the slot copied since the last one ({@link SlotWire.Report}), and
 * each answer the slot's orders: its assignment when it changed (a new topic joins the running
 * slot), stop, or halt. A slot the leader no longer counts as its current attempt (one Spark
 * thought lost and a new attempt replaced) is told to halt: it commits nothing more. A leader that
 * cannot be reached for {@link #LEADERLESS_MS} halts it too.
 */
final class Slot implements SlotHost {
  static final long TALK_MS = 200;
  static final long IDLE_TALK_MS = 1_000; // while a trickle at most is read: a slot's idle cost

  /**
   * Records read between two reports that do not make a slot busy: a flow's heartbeats (one a
   * second each) and a quiet topic's are reported once a second, not five times.
   */
  static final long TRICKLE = 10;

  static final long LEADERLESS_MS = 60_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** How a slot reaches its leader: one question, one answer (Spark's plugin RPC). */
  interface Channel {
    String ask(String message) throws Exception;
  }

  private final LoopConfig config;
  private final String run;
  private final int index;
  private final int attempt;
  private final Channel channel;
  private final RecordFilter filter;
  private final Hops hops;
  private final LoopFigures figures;
  private final CopyTask task;
  private CopyLoop.Assignment assignment =
      new CopyLoop.Assignment(-1, Collections.emptySet(), Collections.emptyMap());
  private Set<TopicPartition> fresh = Collections.emptySet();
  private volatile boolean stopping;
  private volatile boolean halted;
  private volatile String failure;
  private long heard = System.currentTimeMillis();
  // What the leader has been told of positions and ends (null before the attempt's first
  // report): a report carries only what moved since.
  private Map<TopicPartition, Long> toldDone;
  private Map<TopicPartition, Long> toldLatest;

  Slot(
      LoopConfig config, String run, int index, int attempt, Channel channel, RecordFilter filter) {
    this.config = config;
    this.filter = filter;
    this.run = run;
    this.index = index;
    this.attempt = attempt;
    this.channel = channel;
    hops = new Hops(config.source(), config.target(), config.provenance(), config.noForwardFrom());
    figures = new LoopFigures(config.boundsMs());
    task =
        new CopyTask(
            this,
            config.consumer(index),
            config.ledger(index),
            config.producer(index),
            config.exactlyOnce());
  }

  /**
   * Run slot {@code index} of the flow whose leader is {@code run}, attempt {@code attempt}, with
   * the configuration {@code config} (JSON, as the leader was given it) and the flow's record
   * {@code filter} (or null), until it is told to stop or halt, fails, or (once) has copied what it
   * was given. Its last report says how it ended.
   */
  static void run(
      String config, String run, int index, int attempt, Channel channel, RecordFilter filter)
      throws Exception {
    LoopConfig parsed =
        LoopConfig.parse(JSON.readValue(config, new TypeReference<Map<String, Object>>() {}));
    new Slot(parsed, run, index, attempt, channel, filter).run();
  }

  void run() throws Exception {
    talk(false); // the first assignment, before any client is made
    if (stopping) {
      // Told to stop before starting (a leader gone, an attempt replaced): no client is made, so
      // no transactional producer of this slot's id fences the one copying now.
      return;
    }
    Thread talker = new Thread(this::talkUntilFinished, Thread.currentThread().getName() + "-talk");
    talker.setDaemon(true);
    talker.start();
    try {
      task.run();
    } finally {
      talker.interrupt();
      talker.join(5_000);
      talk(true);
    }
  }

  private void talkUntilFinished() {
    try {
      boolean busy = true;
      while (!task.finished) {
        Thread.sleep(busy ? TALK_MS : IDLE_TALK_MS);
        busy = talk(false);
      }
    } catch (InterruptedException stopped) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * One report and its answer; a leader out of reach for too long halts the slot. Whether the slot
   * is busy ({@link #busy}).
   */
  private boolean talk(boolean last) {
    long polled = task.polled.getAndSet(0);
    int held = currentVersion();
    LoopFigures.Taken taken = figures.take();
    Map<TopicPartition, Long> done = new HashMap<>(task.done);
    Map<TopicPartition, Long> latest = new HashMap<>(task.latest);
    // Whole on an attempt's first report and whenever the partitions held changed (the leader
    // then forgets those no longer held); else only what moved.
    boolean full =
        toldDone == null
            || !done.keySet().equals(toldDone.keySet())
            || !latest.keySet().equals(toldLatest.keySet());
    try {
      SlotWire.Report report =
          new SlotWire.Report(
              run,
              index,
              attempt,
              currentVersion(),
              task.applied,
              polled,
              full,
              full ? done : moved(done, toldDone),
              full ? latest : moved(latest, toldLatest),
              taken,
              failure,
              last);
      obey(SlotWire.readOrders(channel.ask(SlotWire.write(report))));
      heard = System.currentTimeMillis();
      toldDone = done;
      toldLatest = latest;
      return busy(polled, currentVersion() != held);
    } catch (Exception unreachable) {
      task.polled.addAndGet(polled); // told next time
      figures.absorb(taken);
      if (unreachable instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      } else if (System.currentTimeMillis() - heard > LEADERLESS_MS) {
        halt();
      }
      return true;
    }
  }

  /**
   * Whether a slot that read {@code polled} records since its last report is busy (it reports again
   * after {@link #TALK_MS}, not {@link #IDLE_TALK_MS}): more than a {@link #TRICKLE}, or {@code
   * reassigned} (given a new assignment).
   */
  static boolean busy(long polled, boolean reassigned) {
    return polled > TRICKLE || reassigned;
  }

  /** The entries of {@code now} that {@code told} does not hold as they are. */
  static Map<TopicPartition, Long> moved(
      Map<TopicPartition, Long> now, Map<TopicPartition, Long> told) {
    Map<TopicPartition, Long> moved = new HashMap<>();
    now.forEach(
        (partition, at) -> {
          if (!at.equals(told.get(partition))) {
            moved.put(partition, at);
          }
        });
    return moved;
  }

  private synchronized int currentVersion() {
    return assignment.version;
  }

  private synchronized void obey(SlotWire.Orders orders) {
    if (orders.halt) {
      halted = true;
    }
    if (orders.stop || orders.halt) {
      stopping = true;
    }
    if (orders.assignment != null && orders.assignment.version != assignment.version) {
      assignment = orders.assignment;
      fresh = orders.fresh;
    }
    notifyAll();
  }

  private synchronized void halt() {
    halted = true;
    stopping = true;
    notifyAll();
  }

  @Override
  public LoopConfig config() {
    return config;
  }

  @Override
  public Hops hops() {
    return hops;
  }

  @Override
  public LoopFigures figures() {
    return figures;
  }

  @Override
  public RecordFilter filter() {
    return filter;
  }

  @Override
  public synchronized CopyLoop.Assignment assignment() {
    return assignment;
  }

  @Override
  public synchronized void awaitChange(int seen) throws InterruptedException {
    if (assignment.version == seen && !stopping) {
      wait(TALK_MS);
    }
  }

  @Override
  public synchronized long start(TopicPartition partition, Long committed) {
    return config.start(partition, committed, fresh.contains(partition));
  }

  @Override
  public boolean stopping() {
    return stopping;
  }

  @Override
  public boolean halted() {
    return halted;
  }

  @Override
  public void failed(Throwable problem) {
    if (failure == null) {
      String message = problem.getMessage();
      failure = problem.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
    stopping = true;
  }
}
