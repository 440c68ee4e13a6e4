package dev.topo.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The copy loop's versioned report, compared with {@code tests/java/loop-report.json}: the same
 * file {@code tests/unit/test_progress.py} reads with {@code topology/progress.py}, so the two
 * sides cannot drift apart.
 */
class CopyLoopReportTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void theReportIsTheRecordPythonReads() throws Exception {
    LoopFigures figures = new LoopFigures(new long[] {10, 100, 1000});
    TopicPartition orders0 = new TopicPartition("orders", 0);
    TopicPartition orders1 = new TopicPartition("orders", 1);
    TopicPartition clicks0 = new TopicPartition("clicks", 0);
    figures.add(orders0, 2, 300, new long[] {5, 100}, 2, 1_700_000_000_000L);
    figures.add(clicks0, 1, 40, new long[] {2000}, 1, 1_700_000_000_500L);
    figures.lost(new LoopFigures.Loss(orders1, "retention", 4, 10));
    figures.lost(new LoopFigures.Loss(clicks0, "reset", 0, 12));
    String made =
        CopyLoop.record(
            "run-1",
            7,
            1000,
            figures.take(),
            Map.of(orders0, 42L, orders1, 10L),
            Map.of(orders0, 50L, orders1, 10L),
            Set.of(new TopicPartition("clicks", 1)),
            List.of("running", "failed"),
            "KafkaException: the target refused a write");
    Path file = Path.of(System.getProperty("basedir", "."), "tests", "java", "loop-report.json");
    JsonNode expected = JSON.readTree(Files.readString(file));
    assertEquals(expected, JSON.readTree(made));
  }
}
