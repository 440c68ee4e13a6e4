package dev.topo.replication;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * One flow's copy loop, led from the driver: its source partitions are spread over {@code tasks}
 * copy slots ({@link Slot}), each a long-running Spark task on an executor ({@code SlotJobs}
 * launches them: one single-task job per slot). This leader copies nothing: it holds the assignment
 * (sticky and load-aware, see {@link #place}), answers the slots' reports with their orders ({@link
 * SlotWire}), gives running slots a topic the driver adds ({@link #update}) without restarting
 * them, and launches a slot again, alone and with backoff, when its task ends without the slot
 * saying so (its executor was lost): Spark's own retries never run a slot ({@code SlotJobs}), so
 * {@code spark.task.maxFailures} never aborts a flow. A slot attempt replaced by a newer one is
 * fenced: its next report is answered with a halt, and under exactly-once the new attempt's {@code
 * initTransactions} (the same transactional id) fences its producer first. A slot whose copy fails
 * (a write refused, {@code on_loss: stop}) stops the flow: the driver restarts it whole, after a
 * backoff.
 *
 * <p>Made by {@link #start} from a JSON configuration ({@code topology/spark/loop.py} writes it),
 * parsed and checked whole by {@link LoopConfig} before anything starts. The driver reads {@link
 * #report} once a second: the positions committed, the ends last seen, the records read and the
 * figures of what was copied since the previous report, gathered from the slots' reports.
 */
public final class CopyLoop {
  static final long EARLIEST = -2;
  static final long LATEST = -1;
  static final long BACKOFF_MS = 1_000;
  static final long MAX_BACKOFF_MS = 30_000;
  static final long STEADY_MS = 60_000; // a slot that ran this long starts its backoff again
  static final int UNHEARD_LAUNCHES = 3; // a slot never heard from in this many: the flow fails
  static final long HALT_GRACE_MS = 10_000; // a halted slot's task still running then is killed
  private static final long KEEP_MS = 250;
  private static final long ADMIN_SECONDS = 30;
  static final double RATE_SECONDS = 30; // a partition's rate: an average over about this long
  // A rate that decayed below this many bytes a second is forgotten (counted as none): a quiet
  // flow's reports then cost what they carry, not how many partitions the slots hold.
  static final double RATE_FORGOTTEN = 1.0;
  static final long MOVE_GRACE_MS = 30_000; // a slot not letting go of a partition then is fenced
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Map<String, CopyLoop> LEADING = new ConcurrentHashMap<>();

  private final String configText;
  private final String flow;
  private final Launcher launcher;
  private final Fencer fencer;
  private final boolean exactlyOnce;
  private final String transactionalStem;
  private final long rebalanceMs;
  final LoopFigures figures;
  private final List<SlotState> slots = new ArrayList<>();
  private final String runId = UUID.randomUUID().toString();
  private final AtomicLong polled = new AtomicLong();
  private volatile boolean stopping;
  private volatile boolean halted;
  private volatile long haltedAt;
  private volatile String failure;

  /**
   * The partitions the loop began with, and whether the flow had copied any before: only those of a
   * flow that never copied start at its `start`; one found later, at its earliest.
   */
  private final Set<TopicPartition> initial = new HashSet<>();

  private boolean copiedBefore;
  private volatile String fencing;
  private volatile boolean fencingFailed;
  private Map<String, String> topics = Collections.emptyMap();
  private final List<Set<TopicPartition>> assigned = new ArrayList<>();
  private final Map<TopicPartition, Double> rates = new HashMap<>();
  private long decayedAt = System.currentTimeMillis(); // the rates' last decay
  private int version;
  private Moving moving; // a partition taken from one slot, not given to the other yet
  private long settledAt = System.currentTimeMillis(); // the start, or the last move's end
  private final List<String> news = new ArrayList<>();
  private long sequence;
  private long reportedAt = System.currentTimeMillis();
  private Map<TopicPartition, Long> lastPositions = new HashMap<>();
  private Map<TopicPartition, Long> lastEnds = new HashMap<>();
  // Since the last report: the partitions the slots' reports of what moved named, and whether a
  // slot sent a whole report (the partitions it holds changed: every one is looked at again).
  private final Set<TopicPartition> touched = new HashSet<>();
  private boolean reshaped = true;

  /** A slot's partitions and the topic map, as of one version of the assignment. */
  static final class Assignment {
    final int version;
    final Set<TopicPartition> partitions;
    final Map<String, String> topics;

    Assignment(int version, Set<TopicPartition> partitions, Map<String, String> topics) {
      this.version = version;
      this.partitions = partitions;
      this.topics = topics;
    }
  }

  /** How the leader fences a slot's transactional producer (exactly-once): Kafka's admin call. */
  interface Fencer {
    void fence(String transactionalId) throws Exception;
  }

  /** A move under way: taken from its slot at assignment version {@code dropped}, since then. */
  static final class Moving {
    final Rebalance.Move move;
    final int dropped;
    final long since;
    boolean fencing; // the keeper is fencing the slot that did not let go

    Moving(Rebalance.Move move, int dropped, long since) {
      this.move = move;
      this.dropped = dropped;
      this.since = since;
    }
  }

  /** One slot as the leader knows it: its current attempt and what that attempt last said. */
  private static final class SlotState {
    int attempt = -1;
    Launcher.Launched job;
    long launchedAt;
    long nextLaunch;
    long backoff = BACKOFF_MS;
    int unheard; // launches in a row the slot was never heard from
    boolean heard; // the current attempt has reported
    boolean finished; // the current attempt said it ended (stopped, done, or failed)
    int fenced = -1; // an attempt fenced for a move: it and those before are halted
    String lost; // why its last attempt ended unannounced
    Map<TopicPartition, Long> done = new HashMap<>();
    Map<TopicPartition, Long> latest = new HashMap<>();
    long reportedAt = System.currentTimeMillis();
  }

  CopyLoop(LoopConfig config, String configText, String flow, Launcher launcher, Fencer fencer) {
    this.configText = configText;
    this.flow = flow;
    this.launcher = launcher;
    this.fencer = fencer;
    exactlyOnce = config.exactlyOnce();
    transactionalStem = config.transactionalStem();
    rebalanceMs = config.rebalanceMs();
    figures = new LoopFigures(config.boundsMs());
    for (int i = 0; i < config.tasks(); i++) {
      slots.add(new SlotState());
      assigned.add(new HashSet<>());
    }
    place(config.topics(), config.partitions());
    for (Set<TopicPartition> mine : assigned) {
      initial.addAll(mine);
    }
  }

  /**
   * Whether the progress group holds a position for any of the flow's partitions now; true when it
   * cannot tell (a transaction a killed driver left open holds the answer until it times out): a
   * partition without a position then starts at its earliest, never skipping a record.
   */
  private boolean anyCommitted(Map<String, Object> ledgerSettings) {
    if (initial.isEmpty()) {
      return false;
    }
    Set<TopicPartition> remotes = new HashSet<>();
    for (TopicPartition partition : initial) {
      remotes.add(new TopicPartition(topics.get(partition.topic()), partition.partition()));
    }
    try (KafkaConsumer<byte[], byte[]> ledger = new KafkaConsumer<>(ledgerSettings)) {
      for (OffsetAndMetadata at : ledger.committed(remotes, Duration.ofSeconds(30)).values()) {
        if (at != null) {
          return true;
        }
      }
      return false;
    } catch (RuntimeException unknown) {
      return true;
    }
  }

  /**
   * A running loop of the configuration given as JSON, for the flow named {@code flow}: its slots
   * launched by {@code launcher}.
   */
  public static CopyLoop start(String config, String flow, Launcher launcher) throws Exception {
    LoopConfig parsed =
        LoopConfig.parse(JSON.readValue(config, new TypeReference<Map<String, Object>>() {}));
    CopyLoop loop = new CopyLoop(parsed, config, flow, launcher, id -> fence(parsed, id));
    if (parsed.exactlyOnce()) {
      try {
        loop.fencing = fenceOrphans(parsed);
      } catch (Exception cannot) { // not allowed to list or fence: an open one ends at its timeout
        if (cannot instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        Throwable cause = cannot.getCause() == null ? cannot : cannot.getCause();
        loop.fencingFailed = true;
        loop.fencing =
            "could not look for the transactional ids of slots past "
                + parsed.tasks()
                + " to fence them ("
                + cause.getClass().getSimpleName()
                + ": "
                + cause.getMessage()
                + "); a transaction one left open is aborted at its timeout";
      }
    }
    loop.copiedBefore = !parsed.starting().isEmpty() || loop.anyCommitted(parsed.ledger(0));
    loop.lead();
    return loop;
  }

  /**
   * Exactly-once: the producers of the transactional ids a slot past today's count used (a flow
   * that ran with more slots) are fenced before any slot starts, as Kafka Connect fences its tasks'
   * producers: a transaction such a slot left open is aborted now rather than at its timeout
   * (read_committed readers of the target wait behind it until then), and a slot of the old count
   * still alive somewhere can commit nothing more. The ids below the count are fenced by their new
   * slots' own producers. What was done, to be said (null when nothing was).
   */
  private static String fenceOrphans(LoopConfig config) throws Exception {
    try (Admin admin = Admin.create(config.targetAdmin())) {
      List<String> listed = new ArrayList<>();
      for (TransactionListing listing :
          admin.listTransactions().all().get(ADMIN_SECONDS, TimeUnit.SECONDS)) {
        listed.add(listing.transactionalId());
      }
      List<String> orphans = orphans(listed, config.transactionalStem(), config.tasks());
      if (orphans.isEmpty()) {
        return null;
      }
      admin.fenceProducers(orphans).all().get(ADMIN_SECONDS, TimeUnit.SECONDS);
      return "fenced the producers of "
          + orphans.size()
          + " transactional id(s) no copy slot holds now: "
          + String.join(", ", orphans);
    }
  }

  /** Fence the producer of {@code transactionalId} on the flow's target. */
  private static void fence(LoopConfig config, String transactionalId) throws Exception {
    try (Admin admin = Admin.create(config.targetAdmin())) {
      admin.fenceProducers(List.of(transactionalId)).all().get(ADMIN_SECONDS, TimeUnit.SECONDS);
    }
  }

  /**
   * The ids of {@code listed} that are {@code stem} and then a slot index of {@code tasks} or more.
   */
  static List<String> orphans(Collection<String> listed, String stem, int tasks) {
    List<String> found = new ArrayList<>();
    for (String id : listed) {
      if (!id.startsWith(stem)) {
        continue;
      }
      String index = id.substring(stem.length());
      boolean number =
          !index.isEmpty()
              && index.length() < 10
              && index.chars().allMatch(c -> c >= '0' && c <= '9');
      if (number && Integer.parseInt(index) >= tasks) {
        found.add(id);
      }
    }
    Collections.sort(found);
    return found;
  }

  /** What the leader did to the transactional ids of slots past today's count, or null. */
  public String fencing() {
    return fencing;
  }

  /** Whether {@link #fencing} says it could not fence them: a warning, not news. */
  public boolean fencingFailed() {
    return fencingFailed;
  }

  /** Take the slots' reports and launch them (the keeper thread relaunches lost ones). */
  void lead() {
    LEADING.put(runId, this);
    Thread keeper = new Thread(this::keep, "topo-slots-" + runId.substring(0, 8));
    keeper.setDaemon(true);
    keeper.start();
  }

  /** A slot's report (JSON), answered with its orders (JSON): Spark's plugin RPC calls this. */
  public static String receive(String message) throws Exception {
    SlotWire.Report report = SlotWire.readReport(message);
    CopyLoop loop = LEADING.get(report.run);
    return SlotWire.write(loop == null ? SlotWire.Orders.halted() : loop.answer(report));
  }

  /** What the slot's report says, taken in; what it is to do now. */
  synchronized SlotWire.Orders answer(SlotWire.Report report) {
    if (report.slot < 0 || report.slot >= slots.size()) {
      return SlotWire.Orders.halted();
    }
    SlotState slot = slots.get(report.slot);
    if (report.attempt != slot.attempt || report.attempt <= slot.fenced || halted) {
      return SlotWire.Orders.halted(); // a replaced or fenced attempt, or the lease is lost
    }
    polled.addAndGet(report.polled);
    measure(slot, report.figures.partitions, System.currentTimeMillis());
    figures.absorb(report.figures);
    if (report.full) {
      slot.done = new HashMap<>(report.done);
      slot.latest = new HashMap<>(report.latest);
    } else {
      slot.done.putAll(report.done);
      slot.latest.putAll(report.latest);
    }
    if (report.full) {
      reshaped = true;
    } else {
      touched.addAll(report.done.keySet());
      touched.addAll(report.latest.keySet());
    }
    slot.heard = true;
    slot.unheard = 0;
    if (report.failure != null) {
      failed(report.failure);
    }
    if (report.finished) {
      slot.finished = true;
    }
    if (moving != null && moving.move.from == report.slot && report.applied >= moving.dropped) {
      give("moved "); // the slot committed what it copied of the partition and let it go
    }
    if (report.seen == version) { // most reports: no partition set copied again
      return new SlotWire.Orders(stopping, false, null, Set.of());
    }
    Assignment now = assignment(report.slot);
    Set<TopicPartition> fresh = new HashSet<>();
    if (!copiedBefore) {
      for (TopicPartition partition : now.partitions) {
        if (initial.contains(partition)) {
          fresh.add(partition);
        }
      }
    }
    return new SlotWire.Orders(stopping, false, now, fresh);
  }

  /** The keeper thread: launch each slot, and again when its task ended unannounced. */
  private void keep() {
    try {
      while (true) {
        Moving stuck;
        synchronized (this) {
          if (!keepSlots()) {
            break;
          }
          stuck = rebalance(System.currentTimeMillis());
        }
        if (stuck != null) {
          fenceStuck(stuck); // an admin call: outside the lock, slots keep being answered
        }
        synchronized (this) {
          wait(KEEP_MS);
        }
      }
    } catch (InterruptedException stopped) {
      Thread.currentThread().interrupt();
    } finally {
      LEADING.remove(runId);
    }
  }

  /**
   * Start a move when one is due ({@link Rebalance#pick}, at most one at a time and none within
   * {@code rebalance_ms} of the start or the last move): the partition leaves its slot's assignment
   * first, and goes to the other slot only once its slot has committed what it copied of it and let
   * it go ({@link #answer}). A move whose slot has not let go after {@link #MOVE_GRACE_MS} is
   * returned, to have the slot fenced ({@link #fenceStuck}).
   */
  synchronized Moving rebalance(long now) {
    if (stopping) {
      return null;
    }
    if (moving != null) {
      boolean stuck = now - moving.since >= MOVE_GRACE_MS && !moving.fencing;
      if (stuck) {
        moving.fencing = true;
        return moving;
      }
      return null;
    }
    if (rebalanceMs == 0 || now - settledAt < rebalanceMs) {
      return null;
    }
    Rebalance.Move move = Rebalance.pick(assigned, rates);
    if (move == null) {
      return null;
    }
    assigned.get(move.from).remove(move.partition);
    version++;
    moving = new Moving(move, version, now);
    return null;
  }

  /**
   * A slot that did not let go of a partition in time (its executor unreachable, the slot stuck):
   * its attempt is fenced (its reports are answered with a halt, and under exactly-once its
   * producer is fenced on the target, so a transaction it still writes is refused), its task is
   * cancelled to be launched again, and the partition goes to the other slot.
   */
  void fenceStuck(Moving stuck) throws InterruptedException {
    String refused = null;
    if (exactlyOnce) {
      try {
        fencer.fence(transactionalStem + stuck.move.from);
      } catch (Exception cannot) {
        if (cannot instanceof InterruptedException) {
          throw (InterruptedException) cannot;
        }
        refused = cannot.getClass().getSimpleName() + ": " + cannot.getMessage();
      }
    }
    synchronized (this) {
      if (moving != stuck) {
        return; // it let go meanwhile, or the partition is gone
      }
      if (refused != null) {
        moving.fencing = false; // tried again at the next look
        news.add(
            "could not fence copy slot "
                + stuck.move.from
                + " to move "
                + stuck.move.partition
                + " ("
                + refused
                + "); trying again");
        return;
      }
      SlotState slot = slots.get(stuck.move.from);
      slot.fenced = slot.attempt;
      if (slot.job != null) {
        slot.job.cancel();
      }
      give("fenced copy slot " + stuck.move.from + ", which did not let go in time, and moved ");
    }
  }

  /** Give the partition under way to its new slot: the move is done. */
  private void give(String said) {
    assigned.get(moving.move.to).add(moving.move.partition);
    version++;
    news.add(said + moving.move);
    moving = null;
    settledAt = System.currentTimeMillis();
  }

  /**
   * What the leader did that a person should hear of (moves) since the last call, a line each; null
   * when nothing (the driver asks with one call, not by walking a Java list).
   */
  public synchronized String news() {
    if (news.isEmpty()) {
      return null;
    }
    String said = String.join("\n", news);
    news.clear();
    return said;
  }

  /** One look at every slot; false once none will run again. */
  private boolean keepSlots() {
    long now = System.currentTimeMillis();
    boolean any = false;
    for (int i = 0; i < slots.size(); i++) {
      SlotState slot = slots.get(i);
      if (slot.job != null && slot.job.isDone()) {
        ended(i, slot, now);
      }
      if (slot.job != null) {
        any = true;
        if (halted && now - haltedAt > HALT_GRACE_MS) {
          slot.job.cancel();
        }
      } else if (!slot.finished && !stopping) {
        any = true;
        if (now >= slot.nextLaunch) {
          launch(i, slot, now);
        }
      }
    }
    return any;
  }

  private void ended(int index, SlotState slot, long now) {
    String why = slot.job.failure();
    slot.job = null;
    if (slot.finished || stopping) {
      return;
    }
    // Ended without the slot saying so: its executor was lost, or it never started.
    slot.lost = why == null ? "its task ended" : why;
    slot.unheard = slot.heard ? 0 : slot.unheard + 1;
    if (slot.unheard >= UNHEARD_LAUNCHES) {
      failed("copy slot " + index + " could not start: " + slot.lost);
      return;
    }
    if (now - slot.launchedAt >= STEADY_MS) {
      slot.backoff = BACKOFF_MS;
    }
    slot.nextLaunch = now + slot.backoff;
    slot.backoff = Math.min(MAX_BACKOFF_MS, slot.backoff * 2);
  }

  private void launch(int index, SlotState slot, long now) {
    slot.attempt++;
    slot.heard = false;
    slot.finished = false;
    slot.launchedAt = now;
    try {
      slot.job = launcher.launch(flow, runId, index, slot.attempt, configText);
    } catch (RuntimeException refused) {
      failed(
          "copy slot "
              + index
              + " could not be launched: "
              + refused.getClass().getSimpleName()
              + ": "
              + refused.getMessage());
    }
  }

  /**
   * The flow's topics (source -> remote) and their partition counts, as the driver now has them:
   * each new partition goes to its slot ({@link #place}), the others stay where they are.
   */
  public void update(String topicsJson, String partitionsJson) throws Exception {
    place(
        JSON.readValue(topicsJson, new TypeReference<Map<String, String>>() {}),
        JSON.readValue(partitionsJson, new TypeReference<Map<String, Integer>>() {}));
  }

  /**
   * Each partition goes to one slot and stays there while the loop runs (sticky: its exactly-once
   * transactions keep one transactional id, and no slot gives up a partition it copies). A new
   * partition goes to the slot with the least load: the fewest bytes a second measured over the
   * partitions it holds ({@link #rates}), then the fewest partitions, then the lowest number; so
   * the partitions a loop starts with are spread evenly, and a topic found later goes to the slots
   * that copy least, not next to a hot partition. Nothing changes when nothing did.
   */
  private synchronized void place(Map<String, String> topics, Map<String, Integer> partitions) {
    List<Set<TopicPartition>> next = new ArrayList<>();
    for (Set<TopicPartition> mine : assigned) {
      Set<TopicPartition> kept = new HashSet<>();
      for (TopicPartition partition : mine) {
        if (partition.partition() < partitions.getOrDefault(partition.topic(), 0)
            && topics.containsKey(partition.topic())) {
          kept.add(partition);
        }
      }
      next.add(kept);
    }
    Set<TopicPartition> held = new HashSet<>();
    next.forEach(held::addAll);
    if (moving != null) {
      TopicPartition partition = moving.move.partition;
      if (partition.partition() < partitions.getOrDefault(partition.topic(), 0)
          && topics.containsKey(partition.topic())) {
        held.add(partition); // under way: it goes to its new slot, not to the least loaded
      } else {
        moving = null; // its topic is gone
        settledAt = System.currentTimeMillis();
      }
    }
    List<TopicPartition> fresh = new ArrayList<>();
    for (String topic : topics.keySet()) {
      for (int p = 0; p < partitions.getOrDefault(topic, 0); p++) {
        TopicPartition partition = new TopicPartition(topic, p);
        if (!held.contains(partition)) {
          fresh.add(partition);
        }
      }
    }
    rates.keySet().retainAll(held); // a partition gone is forgotten
    fresh.sort(BY_TOPIC_AND_PARTITION);
    for (TopicPartition partition : fresh) {
      next.get(leastLoaded(next)).add(partition);
    }
    if (next.equals(assigned) && topics.equals(this.topics)) {
      return;
    }
    this.topics = Collections.unmodifiableMap(new HashMap<>(topics));
    assigned.clear();
    assigned.addAll(next);
    version++;
  }

  /** The slot with the least measured load, then the fewest partitions, then the lowest number. */
  private int leastLoaded(List<Set<TopicPartition>> next) {
    int best = 0;
    double bestLoad = Double.MAX_VALUE;
    for (int i = 0; i < next.size(); i++) {
      double load = 0;
      for (TopicPartition partition : next.get(i)) {
        load += rates.getOrDefault(partition, 0.0);
      }
      if (load < bestLoad || (load == bestLoad && next.get(i).size() < next.get(best).size())) {
        best = i;
        bestLoad = load;
      }
    }
    return best;
  }

  /**
   * Each partition's copy rate in bytes a second, as its slot's reports measure it: an average over
   * about {@link #RATE_SECONDS}. Every rate decays with time (at most once a second, whoever
   * reports) and is forgotten below {@link #RATE_FORGOTTEN}; what a report copied is added. A
   * partition without a rate counts as none, so a quiet flow's reports cost what they carry, not
   * how many partitions the slots hold.
   */
  private void measure(SlotState slot, Map<TopicPartition, long[]> copied, long now) {
    double seconds = Math.max(0.001, (now - slot.reportedAt) / 1000.0);
    slot.reportedAt = now;
    if (now - decayedAt >= 1_000) {
      double kept = 1 - Math.min(1.0, (now - decayedAt) / 1000.0 / RATE_SECONDS);
      decayedAt = now;
      rates.replaceAll((partition, rate) -> rate * kept);
      rates.values().removeIf(rate -> rate < RATE_FORGOTTEN);
    }
    double weight = Math.min(1.0, seconds / RATE_SECONDS);
    copied.forEach(
        (partition, figures) ->
            rates.merge(partition, figures[LoopFigures.BYTES] / seconds * weight, Double::sum));
  }

  /** Each partition's measured copy rate (bytes a second), for a test. */
  synchronized Map<TopicPartition, Double> rates() {
    return new HashMap<>(rates);
  }

  synchronized Assignment assignment(int slot) {
    return new Assignment(
        version, Collections.unmodifiableSet(new HashSet<>(assigned.get(slot))), topics);
  }

  private synchronized void failed(String problem) {
    if (failure == null) {
      failure = problem;
    }
    stopping = true;
    notifyAll();
  }

  /** Why the loop stopped on its own, or null. */
  public String failure() {
    return failure;
  }

  /** Whether any slot runs or will run again (false once every one stopped, ended or failed). */
  public synchronized boolean isActive() {
    for (SlotState slot : slots) {
      if ((slot.job != null && !slot.job.isDone()) || (!slot.finished && !stopping)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Stop every slot at once, committing nothing more (the lease is lost): another driver may write
   * now. Returns without waiting; a slot's task still running {@link #HALT_GRACE_MS} later is
   * killed.
   */
  public synchronized void halt() {
    halted = true;
    haltedAt = System.currentTimeMillis();
    stopping = true;
    notifyAll();
  }

  /**
   * Stop every slot once it has committed what it copied; wait for them up to `timeoutMs`, then
   * kill what still runs.
   */
  public void stop(long timeoutMs) throws InterruptedException {
    long until = System.currentTimeMillis() + timeoutMs;
    synchronized (this) {
      stopping = true;
      notifyAll();
      while (running() && System.currentTimeMillis() < until) {
        wait(Math.max(1, Math.min(KEEP_MS, until - System.currentTimeMillis())));
      }
      for (SlotState slot : slots) {
        if (slot.job != null && !slot.job.isDone()) {
          slot.job.cancel();
        }
      }
    }
  }

  private boolean running() {
    for (SlotState slot : slots) {
      if (slot.job != null && !slot.job.isDone()) {
        return true;
      }
    }
    return false;
  }

  /**
   * What happened since the last report, as the loop's own versioned record (JSON, format {@link
   * #REPORT_FORMAT}; {@code topology/progress.py} reads it), or null when nothing did: no record
   * read, no position or end moved. Per source partition whose position or end moved since the last
   * report (every partition in a run's first), or that copied records: its position (every record
   * before it was copied or filtered out, and committed), the source's end as the consumer knows
   * it, and what was copied since the last report; the partitions no slot holds any more (gone
   * since the last report); the flow's latency buckets; each slot's state.
   */
  public synchronized String report() throws Exception {
    long read = polled.getAndSet(0);
    // Only the partitions whose position or end moved: a report's size follows what moved,
    // not how many partitions the flow reads (the first of a run names every one).
    Map<TopicPartition, Long> movedPositions = new HashMap<>();
    Map<TopicPartition, Long> movedEnds = new HashMap<>();
    Set<TopicPartition> gone = new TreeSet<>(BY_TOPIC_AND_PARTITION);
    if (reshaped) {
      wholeMoves(movedPositions, movedEnds, gone);
    } else {
      touchedMoves(movedPositions, movedEnds);
    }
    reshaped = false;
    touched.clear();
    if (read == 0
        && figures.records() == 0
        && !figures.lossesWaiting()
        && movedPositions.isEmpty()
        && gone.isEmpty()) {
      return null;
    }
    LoopFigures.Taken taken = figures.take();
    List<String> states = new ArrayList<>();
    for (SlotState slot : slots) {
      states.add(state(slot));
    }
    long now = System.currentTimeMillis();
    String report =
        record(
            runId,
            ++sequence,
            now - reportedAt,
            taken,
            movedPositions,
            movedEnds,
            gone,
            states,
            failure);
    reportedAt = now;
    return report;
  }

  /**
   * What moved since the last report, every partition the slots hold looked at (the run's first
   * report, and after a slot's whole report): the positions and ends that differ from the last
   * report's, and the partitions no slot holds any more.
   */
  private void wholeMoves(
      Map<TopicPartition, Long> movedPositions,
      Map<TopicPartition, Long> movedEnds,
      Set<TopicPartition> gone) {
    Map<TopicPartition, Long> positions = new HashMap<>();
    Map<TopicPartition, Long> ends = new HashMap<>();
    for (SlotState slot : slots) {
      positions.putAll(slot.done);
      ends.putAll(slot.latest);
    }
    positions.forEach((partition, at) -> ends.merge(partition, at, Math::max));
    positions.forEach(
        (partition, at) -> moved(partition, at, ends.get(partition), movedPositions, movedEnds));
    gone.addAll(lastPositions.keySet());
    gone.removeAll(positions.keySet());
    lastPositions = positions;
    lastEnds = ends;
  }

  /**
   * What moved since the last report, only the partitions the slots' reports of what moved named
   * looked at (the partitions held are as they were): a quiet flow's report costs what moved.
   */
  private void touchedMoves(
      Map<TopicPartition, Long> movedPositions, Map<TopicPartition, Long> movedEnds) {
    for (TopicPartition partition : touched) {
      Long at = null;
      Long end = null;
      for (SlotState slot : slots) { // as the whole look's merge: a later slot's word wins
        at = slot.done.getOrDefault(partition, at);
        end = slot.latest.getOrDefault(partition, end);
      }
      if (at != null) {
        end = end == null ? at : Math.max(end, at);
        moved(partition, at, end, movedPositions, movedEnds);
        lastPositions.put(partition, at);
      }
      if (end != null) {
        lastEnds.put(partition, end);
      }
    }
  }

  /** The partition's position and end, among those that moved when either differs from last. */
  private void moved(
      TopicPartition partition,
      Long at,
      Long end,
      Map<TopicPartition, Long> movedPositions,
      Map<TopicPartition, Long> movedEnds) {
    if (!at.equals(lastPositions.get(partition))
        || (end != null && !end.equals(lastEnds.get(partition)))) {
      movedPositions.put(partition, at);
      if (end != null) {
        movedEnds.put(partition, end);
      }
    }
  }

  /** How a slot is, for the report: running, restarting (launched again), stopped or failed. */
  private String state(SlotState slot) {
    if (slot.job != null && !slot.job.isDone()) {
      return slot.attempt > 0 && !slot.heard ? "restarting" : "running";
    }
    if (!slot.finished && !stopping) {
      return "restarting";
    }
    return failure != null ? "failed" : "stopped";
  }

  /** The report's record (JSON), from what {@link #report} gathered. */
  static String record(
      String run,
      long sequence,
      long intervalMs,
      LoopFigures.Taken taken,
      Map<TopicPartition, Long> positions,
      Map<TopicPartition, Long> ends,
      Set<TopicPartition> gone,
      List<String> slotStates,
      String failure)
      throws Exception {
    Set<TopicPartition> named = new TreeSet<>(BY_TOPIC_AND_PARTITION);
    named.addAll(positions.keySet());
    named.addAll(taken.partitions.keySet());
    List<Map<String, Object>> partitions = new ArrayList<>();
    for (TopicPartition partition : named) {
      long[] copied =
          taken.partitions.getOrDefault(partition, new long[] {0, 0, 0, Long.MIN_VALUE});
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("topic", partition.topic());
      item.put("partition", partition.partition());
      item.put("position", positions.get(partition));
      item.put("end", ends.get(partition));
      item.put("records", copied[LoopFigures.RECORDS]);
      item.put("bytes", copied[LoopFigures.BYTES]);
      item.put("latency_sum_ms", copied[LoopFigures.LATENCY]);
      long newest = copied[LoopFigures.NEWEST];
      item.put("newest_timestamp_ms", newest == Long.MIN_VALUE ? null : newest);
      partitions.add(item);
    }
    List<Map<String, Object>> slots = new ArrayList<>();
    for (int i = 0; i < slotStates.size(); i++) {
      Map<String, Object> slot = new LinkedHashMap<>();
      slot.put("slot", i);
      slot.put("state", slotStates.get(i));
      slot.put("failure", "failed".equals(slotStates.get(i)) ? failure : null);
      slots.add(slot);
    }
    List<Map<String, Object>> losses = new ArrayList<>();
    for (LoopFigures.Loss loss : taken.losses) {
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("topic", loss.partition.topic());
      item.put("partition", loss.partition.partition());
      item.put("kind", loss.kind);
      item.put("from", loss.from);
      item.put("to", loss.to);
      losses.add(item);
    }
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("format", REPORT_FORMAT);
    report.put("run", run);
    report.put("sequence", sequence);
    report.put("interval_ms", intervalMs);
    report.put("latency_sum_ms", taken.latency);
    report.put("latency_buckets", taken.buckets);
    report.put("partitions", partitions);
    report.put("slots", slots);
    report.put("losses", losses);
    List<Map<String, Object>> left = new ArrayList<>();
    for (TopicPartition partition : gone) {
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("topic", partition.topic());
      item.put("partition", partition.partition());
      left.add(item);
    }
    report.put("gone", left);
    return JSON.writeValueAsString(report);
  }

  /** The version of {@link #report}'s record: {@code topology/progress.py} refuses another. */
  static final int REPORT_FORMAT = 2;

  private static final Comparator<TopicPartition> BY_TOPIC_AND_PARTITION =
      Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);
}
