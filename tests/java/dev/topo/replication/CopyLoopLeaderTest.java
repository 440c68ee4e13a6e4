package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The flow's leader ({@link CopyLoop}) with its slots launched by a stand-in for Spark: what it
 * answers a slot's report ({@link SlotWire}), which attempts it fences, how it launches a lost slot
 * again, and when the flow fails or stops. No Kafka is needed: nothing here copies.
 */
class CopyLoopLeaderTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long REBALANCE_MS = 60_000; // as tests/java/loop-config.json says

  /** A launch as the stand-in saw it, which a test ends as Spark would. */
  static final class Launch implements Launcher.Launched {
    final int slot;
    final int attempt;
    volatile boolean done;
    volatile String failure;
    volatile boolean cancelled;

    Launch(int slot, int attempt) {
      this.slot = slot;
      this.attempt = attempt;
    }

    @Override
    public boolean isDone() {
      return done;
    }

    @Override
    public String failure() {
      return failure;
    }

    @Override
    public void cancel() {
      cancelled = true;
      done = true;
    }
  }

  static final class Launches implements Launcher {
    final List<Launch> made = new ArrayList<>();
    final List<String> fenced = new ArrayList<>(); // transactional ids the leader fenced
    String run;

    @Override
    public synchronized Launched launch(
        String flow, String run, int slot, int attempt, String config) {
      this.run = run;
      Launch launch = new Launch(slot, attempt);
      made.add(launch);
      return launch;
    }

    synchronized List<Launch> of(int slot) {
      List<Launch> found = new ArrayList<>();
      for (Launch launch : made) {
        if (launch.slot == slot) {
          found.add(launch);
        }
      }
      return found;
    }
  }

  private static String config(int tasks) throws Exception {
    Path file = Path.of(System.getProperty("basedir", "."), "tests", "java", "loop-config.json");
    Map<String, Object> given =
        new LinkedHashMap<>(
            JSON.readValue(Files.readString(file), new TypeReference<Map<String, Object>>() {}));
    given.put("tasks", tasks);
    given.put("topics", Map.of("orders", "east.orders", "clicks", "east.clicks"));
    given.put("partitions", Map.of("orders", 3, "clicks", 2));
    given.put("starting", Map.of());
    return JSON.writeValueAsString(given);
  }

  private static CopyLoop leading(Launches launches, int tasks) throws Exception {
    return leading(launches, tasks, false);
  }

  private static CopyLoop leading(Launches launches, int tasks, boolean exactlyOnce)
      throws Exception {
    Map<String, Object> given =
        JSON.readValue(config(tasks), new TypeReference<Map<String, Object>>() {});
    given.put("exactly_once", exactlyOnce);
    String text = JSON.writeValueAsString(given);
    LoopConfig parsed =
        LoopConfig.parse(JSON.readValue(text, new TypeReference<Map<String, Object>>() {}));
    CopyLoop loop = new CopyLoop(parsed, text, "east->west", launches, launches.fenced::add);
    loop.lead();
    return loop;
  }

  private static void await(String what, BooleanSupplier condition) throws Exception {
    long until = System.currentTimeMillis() + 10_000;
    while (!condition.getAsBoolean()) {
      assertTrue(System.currentTimeMillis() < until, "timed out waiting for " + what);
      Thread.sleep(20);
    }
  }

  private static SlotWire.Report report(
      String run, int slot, int attempt, int seen, Map<TopicPartition, Long> done) {
    return report(run, slot, attempt, seen, true, done);
  }

  private static SlotWire.Report report(
      String run, int slot, int attempt, int seen, boolean full, Map<TopicPartition, Long> done) {
    LoopFigures figures = new LoopFigures(new long[] {10, 100, 1000});
    figures.add(new TopicPartition("orders", 0), 2, 30, new long[] {5, 50}, 2, 1_700_000_000_000L);
    return new SlotWire.Report(
        run, slot, attempt, seen, seen, 2, full, done, Map.of(), figures.take(), null, false);
  }

  private static SlotWire.Orders ask(SlotWire.Report report) throws Exception {
    // through the text a slot sends and reads back, as Spark's RPC carries it
    return SlotWire.readOrders(CopyLoop.receive(SlotWire.write(report)));
  }

  @Test
  void eachSlotGetsItsPartitionsOnceAndEveryPartitionHasOneSlot() throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 2);
    await("both slots launched", () -> launches.made.size() == 2);
    Set<TopicPartition> all = new HashSet<>();
    for (int slot = 0; slot < 2; slot++) {
      SlotWire.Orders orders = ask(report(launches.run, slot, 0, -1, Map.of()));
      assertFalse(orders.stop || orders.halt);
      assertNotNull(orders.assignment);
      for (TopicPartition partition : orders.assignment.partitions) {
        assertTrue(all.add(partition), partition + " is in two slots");
      }
      // a flow that never copied: every partition it began with may start at its `start`
      assertEquals(orders.assignment.partitions, orders.fresh);
      // holding the current version, the answer carries no assignment
      assertNull(
          ask(report(launches.run, slot, 0, orders.assignment.version, Map.of())).assignment);
    }
    assertEquals(5, all.size());
    loop.stop(1_000);
  }

  @Test
  void aNewTopicReachesTheRunningSlotsAsANewVersionAndFreshPartitionsStartAtTheirEarliest()
      throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 2);
    await("launched", () -> launches.made.size() == 2);
    int version = ask(report(launches.run, 0, 0, -1, Map.of())).assignment.version;
    loop.update(
        JSON.writeValueAsString(
            Map.of("orders", "east.orders", "clicks", "east.clicks", "new", "east.new")),
        JSON.writeValueAsString(Map.of("orders", 3, "clicks", 2, "new", 4)));
    Set<TopicPartition> news = new HashSet<>();
    for (int slot = 0; slot < 2; slot++) {
      SlotWire.Orders orders = ask(report(launches.run, slot, 0, version, Map.of()));
      assertNotNull(orders.assignment, "a newer version for slot " + slot);
      assertTrue(orders.assignment.version > version);
      assertEquals("east.new", orders.assignment.topics.get("new"));
      for (TopicPartition partition : orders.assignment.partitions) {
        if (partition.topic().equals("new")) {
          news.add(partition);
          assertFalse(orders.fresh.contains(partition), "found later: starts at its earliest");
        }
      }
    }
    assertEquals(4, news.size());
    assertEquals(2, launches.made.size(), "no slot was launched again for a new topic");
    loop.stop(1_000);
  }

  @Test
  void partitionsStartSpreadEvenlyAndANewTopicGoesToTheSlotCopyingLeast() throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 2);
    await("launched", () -> launches.made.size() == 2);
    Map<Integer, Set<TopicPartition>> held = new HashMap<>();
    for (int slot = 0; slot < 2; slot++) {
      held.put(slot, ask(report(launches.run, slot, 0, -1, Map.of())).assignment.partitions);
    }
    // five partitions over two slots: three and two, in topic and partition order
    assertEquals(3, held.get(0).size());
    assertEquals(2, held.get(1).size());
    // Slot 0 copies a lot; slot 1 nothing.
    LoopFigures busy = new LoopFigures(new long[] {10});
    for (TopicPartition partition : held.get(0)) {
      busy.add(partition, 1_000, 50_000_000, new long[0], 0, 1_700_000_000_000L);
    }
    ask(
        new SlotWire.Report(
            launches.run, 0, 0, -1, -1, 1_000, true, Map.of(), Map.of(), busy.take(), null, false));
    assertTrue(loop.rates().get(held.get(0).iterator().next()) > 0);
    loop.update(
        JSON.writeValueAsString(
            Map.of("orders", "east.orders", "clicks", "east.clicks", "new", "east.new")),
        JSON.writeValueAsString(Map.of("orders", 3, "clicks", 2, "new", 2)));
    Set<TopicPartition> slot0 = ask(report(launches.run, 0, 0, -1, Map.of())).assignment.partitions;
    Set<TopicPartition> slot1 = ask(report(launches.run, 1, 0, -1, Map.of())).assignment.partitions;
    assertEquals(held.get(0), slot0, "sticky: the busy slot keeps what it had and gets nothing");
    assertTrue(slot1.containsAll(held.get(1)));
    assertTrue(slot1.contains(new TopicPartition("new", 0)));
    assertTrue(slot1.contains(new TopicPartition("new", 1)));
    // A topic that is gone leaves its slot; nothing else moves.
    loop.update(
        JSON.writeValueAsString(Map.of("orders", "east.orders", "new", "east.new")),
        JSON.writeValueAsString(Map.of("orders", 3, "new", 2)));
    Set<TopicPartition> after = ask(report(launches.run, 1, 0, -1, Map.of())).assignment.partitions;
    Set<TopicPartition> expected = new HashSet<>(slot1);
    expected.removeIf(partition -> partition.topic().equals("clicks"));
    assertEquals(expected, after);
    loop.stop(1_000);
  }

  @Test
  void aSlotWhoseTaskEndsUnannouncedIsLaunchedAgainAloneAndItsOldAttemptIsFenced()
      throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 2);
    await("launched", () -> launches.made.size() == 2);
    TopicPartition orders0 = new TopicPartition("orders", 0);
    ask(report(launches.run, 1, 0, -1, Map.of(orders0, 7L)));
    Launch lost = launches.of(1).get(0);
    lost.failure = "SparkException: ExecutorLostFailure (executor 1 exited)";
    lost.done = true; // its executor was lost
    await("slot 1 launched again", () -> launches.of(1).size() == 2);
    assertEquals(1, launches.of(1).get(1).attempt);
    assertEquals(1, launches.of(0).size(), "slot 0 went on as it was");
    assertTrue(loop.isActive());
    assertNull(loop.failure());
    // The lost attempt, still alive somewhere, is told to halt: it commits nothing more.
    SlotWire.Orders zombie = ask(report(launches.run, 1, 0, -1, Map.of(orders0, 9L)));
    assertTrue(zombie.halt && zombie.stop);
    // The new attempt is answered as the slot.
    SlotWire.Orders fresh = ask(report(launches.run, 1, 1, -1, Map.of(orders0, 8L)));
    assertFalse(fresh.halt);
    assertNotNull(fresh.assignment);
    // The report carries the new attempt's positions and both reports' figures, not the zombie's.
    JsonNode reported = JSON.readTree(loop.report());
    assertEquals(8, partitionField(reported, "orders", 0, "position").asLong());
    assertEquals(4, partitionField(reported, "orders", 0, "records").asLong());
    loop.stop(1_000);
  }

  @Test
  void aSlotThatNeverStartsFailsTheFlowAfterAFewLaunches() throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 1);
    for (int i = 0; i < CopyLoop.UNHEARD_LAUNCHES; i++) {
      int attempt = i;
      await("attempt " + attempt, () -> launches.of(0).size() == attempt + 1);
      Launch launch = launches.of(0).get(attempt);
      launch.failure = "IllegalStateException: topo's copy slots need spark.plugins";
      launch.done = true;
      if (attempt + 1 < CopyLoop.UNHEARD_LAUNCHES) {
        assertNull(loop.failure());
      }
      // (the backoff between launches doubles from BACKOFF_MS)
    }
    await("the flow failed", () -> loop.failure() != null);
    assertTrue(loop.failure().contains("copy slot 0 could not start"), loop.failure());
    assertTrue(loop.failure().contains("spark.plugins"), loop.failure());
    await("inactive", () -> !loop.isActive());
  }

  @Test
  void aSlotsFailureStopsTheFlowAndTheOthersAreToldToStop() throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 2);
    await("launched", () -> launches.made.size() == 2);
    LoopFigures none = new LoopFigures(new long[] {10});
    SlotWire.Report failing =
        new SlotWire.Report(
            launches.run,
            0,
            0,
            -1,
            -1,
            0,
            true,
            Map.of(),
            Map.of(),
            none.take(),
            "IllegalStateException: records lost on the source",
            true);
    ask(failing);
    assertEquals("IllegalStateException: records lost on the source", loop.failure());
    SlotWire.Orders other = ask(report(launches.run, 1, 0, -1, Map.of()));
    assertTrue(other.stop);
    assertFalse(other.halt, "a stop commits what was copied");
    for (Launch launch : launches.made) {
      launch.done = true;
    }
    await("inactive", () -> !loop.isActive());
    assertEquals(2, launches.made.size(), "a failed flow is not launched again by its leader");
    JsonNode reported = JSON.readTree(loop.report());
    assertEquals("failed", reported.get("slots").get(0).get("state").asText());
  }

  @Test
  void aHaltedLeaderFencesEverySlotAndAnUnknownRunIsHalted() throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 2);
    await("launched", () -> launches.made.size() == 2);
    loop.halt();
    assertTrue(ask(report(launches.run, 0, 0, -1, Map.of())).halt);
    Map<TopicPartition, Long> none = new HashMap<>();
    assertTrue(ask(report("no-such-run", 0, 0, -1, none)).halt);
  }

  @Test
  void aReportOfWhatMovedIsMergedAndAWholeOneReplacesWhatTheSlotHeldAndTheLeaderReportsWhatMoved()
      throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 1);
    await("one slot launched", () -> launches.made.size() == 1);
    TopicPartition orders0 = new TopicPartition("orders", 0);
    TopicPartition orders1 = new TopicPartition("orders", 1);
    ask(report(launches.run, 0, 0, -1, true, Map.of(orders0, 5L, orders1, 7L)));
    // only orders-0 moved: orders-1 keeps what the slot said before
    ask(report(launches.run, 0, 0, -1, false, Map.of(orders0, 6L)));
    JsonNode reported = JSON.readTree(loop.report()); // the run's first: every partition
    assertEquals(6, partitionField(reported, "orders", 0, "position").asLong());
    assertEquals(7, partitionField(reported, "orders", 1, "position").asLong());
    // the leader's next report names only what moved since its last
    ask(report(launches.run, 0, 0, -1, false, Map.of(orders0, 8L)));
    reported = JSON.readTree(loop.report());
    assertEquals(8, partitionField(reported, "orders", 0, "position").asLong());
    assertFalse(listed(reported, "orders", 1), "orders-1 did not move");
    assertNull(loop.report(), "nothing moved");
    // a whole report without orders-1 (no longer held): the leader forgets it, so when it is
    // held again, at the same position, it is reported again
    ask(report(launches.run, 0, 0, -1, true, Map.of(orders0, 9L)));
    reported = JSON.readTree(loop.report());
    assertEquals(9, partitionField(reported, "orders", 0, "position").asLong());
    assertFalse(listed(reported, "orders", 1));
    assertEquals(
        JSON.readTree("[{\"topic\": \"orders\", \"partition\": 1}]"), reported.get("gone"));
    ask(report(launches.run, 0, 0, -1, false, Map.of(orders1, 7L)));
    reported = JSON.readTree(loop.report());
    assertEquals(7, partitionField(reported, "orders", 1, "position").asLong());
    // (orders-0 is listed for the records every report here says it copied, without its
    // position, which did not move)
    assertTrue(partitionField(reported, "orders", 0, "position").isNull());
    loop.stop(1_000);
  }

  @Test
  void aSlotReportThatReadNothingIsReportedOnlyWhenItMovedAPositionOrAnEnd() throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 1);
    await("one slot launched", () -> launches.made.size() == 1);
    TopicPartition orders0 = new TopicPartition("orders", 0);
    ask(report(launches.run, 0, 0, -1, true, Map.of(orders0, 5L)));
    assertNotNull(loop.report());
    LoopFigures none = new LoopFigures(new long[] {10});
    // nothing read, nothing moved: nothing to report
    ask(
        new SlotWire.Report(
            launches.run, 0, 0, -1, -1, 0, false, Map.of(), Map.of(), none.take(), null, false));
    assertNull(loop.report());
    // nothing read, but the position moved (past a transaction marker) and the end with it
    ask(
        new SlotWire.Report(
            launches.run,
            0,
            0,
            -1,
            -1,
            0,
            false,
            Map.of(orders0, 6L),
            Map.of(orders0, 6L),
            none.take(),
            null,
            false));
    JsonNode reported = JSON.readTree(loop.report());
    assertEquals(6, partitionField(reported, "orders", 0, "position").asLong());
    assertNull(loop.report());
    loop.stop(1_000);
  }

  @Test
  void aPartitionsRateDecaysWhileItCopiesNothingAndIsForgottenBelowAByteASecond() throws Exception {
    long started = System.currentTimeMillis(); // the rates' decay counts from the loop's start
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 1);
    await("one slot launched", () -> launches.made.size() == 1);
    TopicPartition faint = new TopicPartition("orders", 0);
    TopicPartition busy = new TopicPartition("orders", 1);
    LoopFigures copied = new LoopFigures(new long[] {10});
    // within RATE_SECONDS of the last report, a rate is the bytes over RATE_SECONDS
    copied.add(faint, 1, 31, new long[0], 0, 1_700_000_000_000L); // about 1.03 bytes a second
    copied.add(busy, 1, 30_000, new long[0], 0, 1_700_000_000_000L); // about 1,000
    Map<TopicPartition, Long> held = Map.of(faint, 1L, busy, 1L);
    ask(
        new SlotWire.Report(
            launches.run, 0, 0, -1, -1, 2, true, held, Map.of(), copied.take(), null, false));
    Map<TopicPartition, Double> before = loop.rates();
    assertTrue(before.get(faint) > CopyLoop.RATE_FORGOTTEN);
    Thread.sleep(1_100); // the rates' next decay is due
    LoopFigures none = new LoopFigures(new long[] {10});
    ask(
        new SlotWire.Report(
            launches.run, 0, 0, -1, -1, 0, false, Map.of(), Map.of(), none.take(), null, false));
    double seconds = (System.currentTimeMillis() - started) / 1000.0; // at most this decayed
    Map<TopicPartition, Double> after = loop.rates();
    assertFalse(after.containsKey(faint), "below a byte a second: forgotten");
    assertTrue(after.get(busy) < before.get(busy), "decayed");
    assertTrue(
        after.get(busy) >= before.get(busy) * (1 - seconds / CopyLoop.RATE_SECONDS),
        "by a thirtieth a second, however slow the machine");
    loop.stop(1_000);
  }

  @Test
  void theIdsOfSlotsPastTheCountAreTheOnesFenced() {
    String stem = "topo-t-east-west.loop.";
    List<String> listed =
        List.of(
            stem + "0",
            stem + "1",
            stem + "2",
            stem + "10",
            stem,
            stem + "x",
            stem + "99999999999",
            "topo-t-east-west.loops.3",
            "other.loop.5");
    assertEquals(List.of(stem + "10", stem + "2"), CopyLoop.orphans(listed, stem, 2));
    assertEquals(List.of(), CopyLoop.orphans(listed, stem, 11));
  }

  @Test
  void aSlotTellsOnlyWhatMovedSinceItsLastReport() {
    TopicPartition a = new TopicPartition("a", 0);
    TopicPartition b = new TopicPartition("b", 0);
    assertEquals(Map.of(a, 2L), Slot.moved(Map.of(a, 2L, b, 3L), Map.of(a, 1L, b, 3L)));
    assertEquals(Map.of(b, 3L), Slot.moved(Map.of(b, 3L), Map.of()));
    assertEquals(Map.of(), Slot.moved(Map.of(a, 1L), Map.of(a, 1L)));
  }

  @Test
  void aSlotReadingATrickleReportsOnceASecond() {
    assertFalse(Slot.busy(0, false));
    assertFalse(Slot.busy(1, false)); // a flow's heartbeat
    assertFalse(Slot.busy(Slot.TRICKLE, false));
    assertTrue(Slot.busy(Slot.TRICKLE + 1, false));
    assertTrue(Slot.busy(0, true)); // a new assignment: its start is reported soon
  }

  @Test
  void reportsAndOrdersReadBackAsWritten() throws Exception {
    TopicPartition clicks1 = new TopicPartition("clicks", 1);
    LoopFigures figures = new LoopFigures(new long[] {10, 100});
    figures.add(clicks1, 3, 90, new long[] {1, 20, 300}, 3, 1_700_000_000_123L);
    figures.lost(new LoopFigures.Loss(clicks1, "retention", 4, 10));
    SlotWire.Report read =
        SlotWire.readReport(
            SlotWire.write(
                new SlotWire.Report(
                    "r",
                    3,
                    2,
                    5,
                    4,
                    11,
                    false,
                    Map.of(clicks1, 40L),
                    Map.of(clicks1, 44L),
                    figures.take(),
                    null,
                    true)));
    assertEquals(
        List.of("r", 3, 2, 5, 4, 11L),
        List.of(read.run, read.slot, read.attempt, read.seen, read.applied, read.polled));
    assertFalse(read.full);
    assertEquals(Map.of(clicks1, 40L), read.done);
    assertEquals(Map.of(clicks1, 44L), read.latest);
    assertTrue(read.finished);
    assertEquals(
        List.of(3L, 90L, 321L, 1_700_000_000_123L),
        List.of(
            read.figures.partitions.get(clicks1)[0],
            read.figures.partitions.get(clicks1)[1],
            read.figures.partitions.get(clicks1)[2],
            read.figures.partitions.get(clicks1)[3]));
    assertEquals(321L, read.figures.latency);
    assertEquals("retention", read.figures.losses.get(0).kind);
    CopyLoop.Assignment given =
        new CopyLoop.Assignment(4, Set.of(clicks1), Map.of("clicks", "east.clicks"));
    SlotWire.Orders orders =
        SlotWire.readOrders(
            SlotWire.write(new SlotWire.Orders(true, false, given, Set.of(clicks1))));
    assertTrue(orders.stop);
    assertEquals(4, orders.assignment.version);
    assertEquals(Set.of(clicks1), orders.assignment.partitions);
    assertEquals(Map.of("clicks", "east.clicks"), orders.assignment.topics);
    assertEquals(Set.of(clicks1), orders.fresh);
  }

  private static boolean listed(JsonNode report, String topic, int partition) {
    for (JsonNode item : report.get("partitions")) {
      if (item.get("topic").asText().equals(topic) && item.get("partition").asInt() == partition) {
        return true;
      }
    }
    return false;
  }

  private static JsonNode partitionField(
      JsonNode report, String topic, int partition, String name) {
    for (JsonNode item : report.get("partitions")) {
      if (item.get("topic").asText().equals(topic) && item.get("partition").asInt() == partition) {
        return item.get(name);
      }
    }
    throw new AssertionError(topic + "-" + partition + " is not in the report: " + report);
  }

  /** Slot 0 copying {@code bytes} of each of its partitions in the report, which it gives. */
  private static SlotWire.Orders busy(
      Launches launches,
      int slot,
      int attempt,
      int seen,
      int applied,
      Set<TopicPartition> of,
      long bytes)
      throws Exception {
    LoopFigures copied = new LoopFigures(new long[] {10});
    for (TopicPartition partition : of) {
      copied.add(partition, 1_000, bytes, new long[0], 0, 1_700_000_000_000L);
    }
    return ask(
        new SlotWire.Report(
            launches.run,
            slot,
            attempt,
            seen,
            applied,
            1_000,
            true,
            Map.of(),
            Map.of(),
            copied.take(),
            null,
            false));
  }

  @Test
  void aHotSlotGivesAPartitionAwayOnlyAfterLettingGoOfIt() throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 2);
    await("launched", () -> launches.made.size() == 2);
    SlotWire.Orders first = ask(report(launches.run, 0, 0, -1, Map.of()));
    Set<TopicPartition> hot = first.assignment.partitions;
    ask(report(launches.run, 1, 0, -1, Map.of()));
    busy(launches, 0, 0, first.assignment.version, first.assignment.version, hot, 50_000_000);
    assertNull(loop.rebalance(System.currentTimeMillis()), "not within REBALANCE_MS of the start");
    assertNull(loop.rebalance(System.currentTimeMillis() + REBALANCE_MS));
    SlotWire.Orders dropped = ask(report(launches.run, 0, 0, first.assignment.version, Map.of()));
    assertEquals(hot.size() - 1, dropped.assignment.partitions.size(), "slot 0 lets one go");
    TopicPartition moving =
        new HashSet<>(hot)
            .stream()
                .filter(p -> !dropped.assignment.partitions.contains(p))
                .findFirst()
                .orElseThrow();
    // Not given to slot 1 while slot 0 has not committed and let go of it...
    SlotWire.Orders waiting = ask(report(launches.run, 1, 0, -1, Map.of()));
    assertFalse(waiting.assignment.partitions.contains(moving));
    // ...even once slot 0 holds the version without it, until its copy has taken it up.
    busy(launches, 0, 0, dropped.assignment.version, first.assignment.version, Set.of(), 0);
    assertFalse(
        ask(report(launches.run, 1, 0, -1, Map.of())).assignment.partitions.contains(moving));
    busy(launches, 0, 0, dropped.assignment.version, dropped.assignment.version, Set.of(), 0);
    assertTrue(
        ask(report(launches.run, 1, 0, -1, Map.of())).assignment.partitions.contains(moving));
    assertEquals("moved " + moving + " from copy slot 0 to copy slot 1", loop.news());
    assertEquals(List.of(), launches.fenced, "a slot that lets go is not fenced");
    assertNull(
        loop.rebalance(System.currentTimeMillis() + REBALANCE_MS / 2),
        "none again soon after a move");
  }

  @Test
  void aSlotThatDoesNotLetGoIsFencedAndThePartitionMovesAllTheSame() throws Exception {
    Launches launches = new Launches();
    CopyLoop loop = leading(launches, 2, true);
    await("launched", () -> launches.made.size() == 2);
    SlotWire.Orders first = ask(report(launches.run, 0, 0, -1, Map.of()));
    ask(report(launches.run, 1, 0, -1, Map.of()));
    busy(
        launches,
        0,
        0,
        first.assignment.version,
        first.assignment.version,
        first.assignment.partitions,
        50_000_000);
    long now = System.currentTimeMillis() + REBALANCE_MS;
    assertNull(loop.rebalance(now));
    assertNull(loop.rebalance(now + CopyLoop.MOVE_GRACE_MS - 1), "still in its grace");
    CopyLoop.Moving stuck = loop.rebalance(now + CopyLoop.MOVE_GRACE_MS);
    assertNotNull(stuck);
    loop.fenceStuck(stuck);
    assertEquals(List.of("topo.shop.east--west.loop.0"), launches.fenced);
    assertTrue(launches.of(0).get(0).cancelled, "its task is cancelled, to be launched again");
    // The fenced attempt's late report (a write the fence refused) is answered with a halt and
    // does not fail the flow.
    SlotWire.Report late =
        new SlotWire.Report(
            launches.run,
            0,
            0,
            first.assignment.version,
            first.assignment.version,
            0,
            true,
            Map.of(),
            Map.of(),
            new LoopFigures(new long[] {10}).take(),
            "ProducerFencedException: there is a newer producer",
            false);
    assertTrue(ask(late).halt);
    assertNull(loop.failure());
    assertEquals(1, loop.news().split("\n").length);
    assertNull(loop.news(), "said once");
    Set<TopicPartition> given = new HashSet<>(first.assignment.partitions);
    given.retainAll(ask(report(launches.run, 1, 0, -1, Map.of())).assignment.partitions);
    assertEquals(1, given.size(), "slot 1 got exactly one of slot 0's partitions");
  }
}
