package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The copy loop's configuration ({@link LoopConfig}), read from {@code
 * tests/java/loop-config.json}: what {@code topology/spark/loop.py} writes for a flow east -> west
 * with a handover ({@code tests/unit/test_copy_loop_config.py} checks that loop.py still sends
 * exactly its fields), read as {@link CopyLoop#start} reads it.
 */
class LoopConfigTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Map<String, Object> sent() throws Exception {
    Path file = Path.of(System.getProperty("basedir", "."), "tests", "java", "loop-config.json");
    return JSON.readValue(Files.readString(file), new TypeReference<Map<String, Object>>() {});
  }

  private static Map<String, Object> sent(Consumer<Map<String, Object>> change) throws Exception {
    Map<String, Object> given = new LinkedHashMap<>(sent());
    change.accept(given);
    return given;
  }

  private static String refusal(Map<String, Object> given) {
    return assertThrows(IllegalArgumentException.class, () -> LoopConfig.parse(given)).getMessage();
  }

  private static void assertRefused(String expected, Map<String, Object> given) {
    String message = refusal(given);
    assertTrue(
        message.startsWith("the copy loop's configuration is refused: ")
            && message.contains(expected),
        () -> "expected a refusal saying " + expected + ", got: " + message);
  }

  @Test
  void whatLoopPySendsIsParsedWhole() throws Exception {
    LoopConfig config = LoopConfig.parse(sent());
    assertEquals("east", config.source());
    assertEquals("west", config.target());
    assertTrue(config.provenance());
    assertEquals(Set.of(), config.noForwardFrom());
    assertFalse(config.exactlyOnce());
    assertEquals("topo-eos.shop.east--west", config.group());
    assertEquals(Map.of("orders", "east.orders"), config.topics());
    assertEquals(Map.of("orders", 3), config.partitions());
    assertFalse(config.startLatest());
    assertEquals(Map.of("orders", Map.of(0, 42L, 1, -2L)), config.starting());
    assertFalse(config.startingWins());
    assertFalse(config.once());
    assertEquals(2, config.tasks());
    assertEquals(1000, config.commitMs());
    assertEquals(1000, config.busyCommitMs());
    assertEquals("2000", config.consumer(0).get("max.poll.records")); // as the source client says
    long[] bounds = config.boundsMs();
    assertEquals(10, bounds[0]);
    assertEquals(300_000, bounds[bounds.length - 1]);
    bounds[0] = 99; // a copy: the configuration stays as parsed
    assertEquals(10, config.boundsMs()[0]);
    // heartbeats topics as naming.is_heartbeats tells them, by the flow's separator
    assertTrue(config.heartbeats("heartbeats"));
    assertTrue(config.heartbeats("east.heartbeats"));
    assertTrue(config.heartbeats("north.east.heartbeats"));
    assertFalse(config.heartbeats("orders"));
    assertFalse(config.heartbeats("east.heartbeats.orders"));
    assertFalse(config.heartbeats("myheartbeats"));
    LoopConfig underscored = LoopConfig.parse(sent(given -> given.put("separator", "_")));
    assertTrue(underscored.heartbeats("east_heartbeats"));
    assertFalse(underscored.heartbeats("east.myheartbeats"));
  }

  @Test
  void anUnknownFieldIsRefusedByName() throws Exception {
    assertRefused(
        "unknown field(s) [record_filter]", sent(given -> given.put("record_filter", "key > 1")));
  }

  @Test
  void anotherFormatOrNoneIsRefused() throws Exception {
    assertRefused(
        "format 2 (Integer) is not one this jar reads (format 1",
        sent(given -> given.put("format", 2)));
    assertRefused("format \"1\" is not one", sent(given -> given.put("format", "1")));
    assertRefused("format 1.0 (Double) is not one", sent(given -> given.put("format", 1.0)));
    assertRefused("it has no `format`", sent(given -> given.remove("format")));
    // the format is checked first: a newer format's new fields are reported as a new format
    assertRefused(
        "format 2",
        sent(
            given -> {
              given.put("format", 2);
              given.put("filter", "x");
            }));
  }

  @Test
  void everyFieldIsRequired() throws Exception {
    for (String field : new ArrayList<>(sent().keySet())) {
      if (!field.equals("format")) {
        assertRefused("`" + field + "` is missing", sent(given -> given.remove(field)));
        assertRefused("`" + field + "` is null", sent(given -> given.put(field, null)));
      }
    }
  }

  @Test
  void mistypedValuesAreRefusedSayingWhatWasGiven() throws Exception {
    assertRefused(
        "`provenance` must be true or false, not \"true\"",
        sent(given -> given.put("provenance", "true")));
    assertRefused(
        "`tasks` must be a whole number 1..1024, not 0 (Integer)",
        sent(given -> given.put("tasks", 0)));
    assertRefused(
        "`tasks` must be a whole number 1..1024, not 2.5 (Double)",
        sent(given -> given.put("tasks", 2.5)));
    assertRefused(
        "`commit_ms` must be a whole number >= 1", sent(given -> given.put("commit_ms", -5)));
    assertRefused(
        "`source` must be a non-empty string, not \"\"", sent(given -> given.put("source", "")));
    assertRefused(
        "`source` and `target` are both \"west\"", sent(given -> given.put("source", "west")));
    assertRefused(
        "`start` must be \"earliest\" or \"latest\", not \"mm2\"",
        sent(given -> given.put("start", "mm2")));
    assertRefused(
        "`no_forward_from` holds 7 (Integer), not a cluster name",
        sent(given -> given.put("no_forward_from", List.of("north", 7))));
    assertRefused(
        "`topics` must be an object, not [orders]",
        sent(given -> given.put("topics", List.of("orders"))));
    assertRefused(
        "`topics` maps orders to \"\", not a topic name",
        sent(given -> given.put("topics", Map.of("orders", ""))));
    assertRefused(
        "`partitions` counts \"clicks\", which is not in `topics`",
        sent(given -> given.put("partitions", Map.of("orders", 3, "clicks", 1))));
    assertRefused(
        "`partitions` of orders must be a whole number >= 0, not -1",
        sent(given -> given.put("partitions", Map.of("orders", -1))));
    assertRefused(
        "`on_loss` must be \"alert\" or \"stop\", not \"ignore\"",
        sent(given -> given.put("on_loss", "ignore")));
    assertRefused(
        "`bounds_ms` must ascend", sent(given -> given.put("bounds_ms", List.of(10, 100, 100))));
    assertRefused(
        "`source_client` setting linger.ms must be text, a whole number or true/false",
        sent(given -> given.put("source_client", Map.of("linger.ms", List.of(5)))));
  }

  @Test
  void aHandoversPositionsArePartitionsToOffsets() throws Exception {
    assertRefused(
        "`starting` of orders has a partition \"01\", not a number",
        sent(given -> given.put("starting", Map.of("orders", Map.of("01", 5)))));
    assertRefused(
        "`starting` of orders has a partition \"-1\", not a number",
        sent(given -> given.put("starting", Map.of("orders", Map.of("-1", 5)))));
    assertRefused(
        "`starting` of orders partition 0 must be an offset (-2 the earliest, -1 the latest), not"
            + " -3",
        sent(given -> given.put("starting", Map.of("orders", Map.of("0", -3)))));
    LoopConfig none = LoopConfig.parse(sent(given -> given.put("starting", Map.of())));
    assertTrue(none.starting().isEmpty());
  }

  @Test
  void whatTheConfigurationHoldsCannotBeChanged() throws Exception {
    LoopConfig config = LoopConfig.parse(sent());
    assertThrows(UnsupportedOperationException.class, () -> config.topics().put("x", "y"));
    assertThrows(UnsupportedOperationException.class, () -> config.partitions().put("x", 1));
    assertThrows(
        UnsupportedOperationException.class, () -> config.starting().get("orders").put(2, 0L));
    assertThrows(UnsupportedOperationException.class, () -> config.noForwardFrom().add("x"));
  }

  @Test
  void aBusyThreadNeverCommitsMoreOftenThanCommitMs() throws Exception {
    LoopConfig config =
        LoopConfig.parse(
            sent(
                given -> {
                  given.put("commit_ms", 2000);
                  given.put("busy_commit_ms", 1000);
                }));
    assertEquals(2000, config.busyCommitMs());
  }

  @Test
  void aPollTakesEverythingFetchedUnlessTheSourceClientSaysOtherwise() throws Exception {
    Map<String, Object> unsaid = new HashMap<>(Map.of("bootstrap.servers", "e:1"));
    assertEquals(
        String.valueOf(Integer.MAX_VALUE),
        LoopConfig.parse(sent(given -> given.put("source_client", unsaid)))
            .consumer(1)
            .get("max.poll.records"));
  }

  @Test
  void theClientsCarryWhatTheLoopRestsOnWhateverTheClusterSettingsSay() throws Exception {
    Map<String, Object> source = new HashMap<>(Map.of("bootstrap.servers", "e:1"));
    source.put("enable.auto.commit", "true"); // a user's client settings cannot turn these off
    source.put("isolation.level", "read_uncommitted");
    source.put("fetch.max.bytes", 1048576);
    LoopConfig config =
        LoopConfig.parse(
            sent(
                given -> {
                  given.put("source_client", source);
                  given.put("exactly_once", true);
                }));
    Map<String, Object> consumer = config.consumer(1);
    assertEquals("e:1", consumer.get("bootstrap.servers"));
    assertEquals("1048576", consumer.get("fetch.max.bytes"));
    assertEquals("false", consumer.get("enable.auto.commit"));
    assertEquals("read_committed", consumer.get("isolation.level"));
    assertEquals("none", consumer.get("auto.offset.reset")); // a loss is reported, never skipped
    assertEquals("topo-shop-east--west-1", consumer.get("client.id"));
    assertFalse(consumer.containsKey("group.id")); // the source is read without a group

    Map<String, Object> ledger = config.ledger(1);
    assertEquals("w:1", ledger.get("bootstrap.servers"));
    assertEquals("topo-eos.shop.east--west", ledger.get("group.id"));
    assertEquals("read_committed", ledger.get("isolation.level"));
    assertEquals("false", ledger.get("enable.auto.commit"));
    assertEquals("topo-shop-east--west-progress-1", ledger.get("client.id"));

    Map<String, Object> producer = config.producer(1);
    assertEquals("w:1", producer.get("bootstrap.servers"));
    assertEquals("all", producer.get("acks"));
    assertEquals("true", producer.get("enable.idempotence"));
    assertEquals("topo.shop.east--west.loop.1", producer.get("transactional.id"));
    assertEquals(
        "org.apache.kafka.common.serialization.ByteArraySerializer",
        producer.get("value.serializer"));

    assertEquals("zstd", producer.get("compression.type")); // the flow's own producer settings

    Map<String, Object> admin = config.targetAdmin(); // the target's, and the admin's own
    assertEquals("w:1", admin.get("bootstrap.servers"));
    assertEquals("60000", admin.get("request.timeout.ms"));
    assertEquals("topo-shop-east--west-leader", admin.get("client.id"));

    LoopConfig atLeastOnce = LoopConfig.parse(sent());
    assertFalse(atLeastOnce.producer(0).containsKey("transactional.id"));
    config.consumer(0).put("client.id", "changed"); // each call is a fresh map
    assertEquals("topo-shop-east--west-0", config.consumer(0).get("client.id"));
  }

  @Test
  void wherePartitionsStart() throws Exception {
    TopicPartition handedOver = new TopicPartition("orders", 0); // the handover says 42
    TopicPartition fromEarliest = new TopicPartition("orders", 1); // the handover says -2
    TopicPartition other = new TopicPartition("orders", 2); // the handover says nothing
    LoopConfig config = LoopConfig.parse(sent());
    // a committed position wins over a handover's, which wins over the flow's start
    assertEquals(7, config.start(handedOver, 7L, true));
    assertEquals(42, config.start(handedOver, null, true));
    assertEquals(CopyLoop.EARLIEST, config.start(fromEarliest, null, false));
    assertEquals(CopyLoop.EARLIEST, config.start(other, null, true));

    LoopConfig latest = LoopConfig.parse(sent(given -> given.put("start", "latest")));
    assertEquals(CopyLoop.LATEST, latest.start(other, null, true));
    // a partition found since the loop began, or of a flow that copied before: the earliest
    assertEquals(CopyLoop.EARLIEST, latest.start(other, null, false));
    assertEquals(11, latest.start(other, 11L, true));

    // a new handover's positions win over those committed before it
    LoopConfig wins = LoopConfig.parse(sent(given -> given.put("starting_wins", true)));
    assertEquals(42, wins.start(handedOver, 7L, false));
    assertEquals(7, wins.start(other, 7L, false));
  }

  @Test
  void itsTextNamesTheFlowAndNoSetting() throws Exception {
    Map<String, Object> secret = new HashMap<>(Map.of("sasl.jaas.config", "password=\"hunter2\""));
    String shown = LoopConfig.parse(sent(given -> given.put("target_client", secret))).toString();
    assertTrue(shown.contains("east->west"), shown);
    assertFalse(shown.contains("hunter2"), shown);
  }

  @Test
  void boundsAreCopiedAsGiven() throws Exception {
    LoopConfig config =
        LoopConfig.parse(sent(given -> given.put("bounds_ms", List.of(0, 5, 9_000_000_000L))));
    assertArrayEquals(new long[] {0, 5, 9_000_000_000L}, config.boundsMs());
  }
}
