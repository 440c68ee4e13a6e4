package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * The copy loop's rules and stamps ({@link Hops}), which must say what topo's Python reference says
 * ({@code topology/core/jobs.py}: {@code forwards} and {@code copied_headers}).
 */
class HopsTest {
  private static final Hops EAST_TO_WEST = new Hops("east", "west", true, Set.of());

  private static Headers headers(String... keysAndValues) {
    RecordHeaders headers = new RecordHeaders();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      byte[] value =
          keysAndValues[i + 1] == null
              ? null
              : keysAndValues[i + 1].getBytes(StandardCharsets.UTF_8);
      headers.add(keysAndValues[i], value);
    }
    return headers;
  }

  /** The headers as "key=value" in order ("key=null" for a null value). */
  private static List<String> shown(Headers headers) {
    List<String> shown = new ArrayList<>();
    for (Header header : headers) {
      String value =
          header.value() == null ? "null" : new String(header.value(), StandardCharsets.UTF_8);
      shown.add(header.key() + "=" + value);
    }
    return shown;
  }

  @Test
  void aRecordFromItsOriginIsStampedWithItsSourceAndOffsetAfterItsOwnHeaders() {
    Headers copied = EAST_TO_WEST.copied(headers("trace", "t1", "kind", null), 42);
    assertEquals(
        List.of("trace=t1", "kind=null", "topo-provenance=east", "topo-offsets=east:42"),
        shown(copied));
  }

  @Test
  void aFirstHopWritesEveryOffsetsDigitsAndTheSourcesNameInUtf8() {
    Hops fromMunich = new Hops("münchen", "west", true, Set.of());
    for (long offset : new long[] {0, 9, 10, 99, 100, 1234567890123L, Long.MAX_VALUE}) {
      assertEquals(
          List.of("topo-provenance=münchen", "topo-offsets=münchen:" + offset),
          shown(fromMunich.copied(new RecordHeaders(), offset)));
    }
  }

  @Test
  void aFirstHopLeavesTheRecordsOwnHeadersAsTheyWere() {
    Headers given = headers("trace", "t1");
    EAST_TO_WEST.copied(given, 3);
    assertEquals(List.of("trace=t1"), shown(given));
  }

  @Test
  void aCopyOfACopyAppendsThisHopAndKeepsOneOfEachStamp() {
    // central -> east -> west: the stamps central wrote stand between the record's own headers
    Headers given =
        headers(
            "a",
            "1",
            "topo-provenance",
            "central",
            "b",
            "2",
            "topo-offsets",
            "central:7",
            "c",
            "3");
    Headers copied = EAST_TO_WEST.copied(given, 42);
    assertEquals(
        List.of(
            "a=1", "b=2", "c=3", "topo-provenance=central,east", "topo-offsets=central:7,east:42"),
        shown(copied));
  }

  @Test
  void aRecordThatHasBeenOnTheTargetIsNeverCopiedBack() {
    assertNull(EAST_TO_WEST.copied(headers("topo-provenance", "west"), 1));
    assertNull(EAST_TO_WEST.copied(headers("topo-provenance", "west,central"), 1));
    assertNull(EAST_TO_WEST.copied(headers("topo-provenance", "central,west"), 1));
    // names are compared whole: a cluster whose name contains the target's is another cluster
    assertNotNull(EAST_TO_WEST.copied(headers("topo-provenance", "northwest"), 1));
  }

  @Test
  void theLoopRuleHoldsWithProvenanceOffAndTheHeadersThenPassUntouched() {
    Hops plain = new Hops("east", "west", false, Set.of());
    assertNull(plain.copied(headers("topo-provenance", "central,west"), 1));
    Headers given = headers("topo-provenance", "central", "x", "y");
    assertSame(given, plain.copied(given, 1));
    assertEquals(List.of("topo-provenance=central", "x=y"), shown(plain.copied(given, 1)));
  }

  @Test
  void aMeshForwardsNoRecordWhoseLastHopIsAnotherMemberOfIt() {
    // an identity active-active mesh of east, west and north: the edge east -> west copies what
    // was written on east, and what came to east from a cluster outside the mesh
    Hops mesh = new Hops("east", "west", true, Set.of("north"));
    assertNull(mesh.copied(headers("topo-provenance", "north"), 3));
    assertNull(mesh.copied(headers("topo-provenance", "central,north"), 3));
    Headers throughNorth = mesh.copied(headers("topo-provenance", "north,central"), 3);
    assertEquals(
        List.of("topo-provenance=north,central,east", "topo-offsets=east:3"), shown(throughNorth));
    assertNotNull(mesh.copied(headers(), 3));
  }

  @Test
  void emptyNamesInAProvenanceAreSkippedAndAMissingOffsetsStampStartsAfresh() {
    Headers copied = EAST_TO_WEST.copied(headers("topo-provenance", ",central,,"), 9);
    assertEquals(List.of("topo-provenance=central,east", "topo-offsets=east:9"), shown(copied));
    Headers emptyStamps =
        EAST_TO_WEST.copied(headers("topo-provenance", "", "topo-offsets", ""), 9);
    assertEquals(List.of("topo-provenance=east", "topo-offsets=east:9"), shown(emptyStamps));
  }

  @Test
  void aNullStampIsNoHop() {
    Headers copied = EAST_TO_WEST.copied(headers("topo-provenance", null, "k", "v"), 5);
    assertEquals(List.of("k=v", "topo-provenance=east", "topo-offsets=east:5"), shown(copied));
  }

  @Test
  void theGivenHeadersAreNotChanged() {
    Headers given = headers("topo-provenance", "central", "topo-offsets", "central:1");
    EAST_TO_WEST.copied(given, 2);
    assertEquals(List.of("topo-provenance=central", "topo-offsets=central:1"), shown(given));
  }
}
