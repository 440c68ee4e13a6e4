package dev.topo.replication;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * The messages between a copy slot ({@link Slot}, in a Spark task) and its flow's leader ({@link
 * CopyLoop}, in the driver), as JSON text: Spark's plugin RPC carries them ({@code SlotPlugin}),
 * and so can anything that carries a string. A slot asks; the leader answers. Each ask is a {@link
 * Report} of what the slot did since its previous one; each answer the slot's {@link Orders}.
 */
final class SlotWire {
  private static final ObjectMapper JSON = new ObjectMapper();

  private SlotWire() {}

  /** One slot attempt's news: who it is, what it copied since its last report, how it is. */
  static final class Report {
    final String run;
    final int slot;
    final int attempt;
    final int seen; // the assignment version it holds
    final int applied; // the version its copy took up: what it let go of is committed
    final long polled;
    // Positions and ends: every partition the slot holds when `full`, else only those that moved
    // since its last report the leader answered (a slot idle over thousands says nothing of them).
    final boolean full;
    final Map<TopicPartition, Long> done;
    final Map<TopicPartition, Long> latest;
    final LoopFigures.Taken figures;
    final String failure;
    final boolean finished;

    Report(
        String run,
        int slot,
        int attempt,
        int seen,
        int applied,
        long polled,
        boolean full,
        Map<TopicPartition, Long> done,
        Map<TopicPartition, Long> latest,
        LoopFigures.Taken figures,
        String failure,
        boolean finished) {
      this.run = run;
      this.slot = slot;
      this.attempt = attempt;
      this.seen = seen;
      this.applied = applied;
      this.polled = polled;
      this.full = full;
      this.done = done;
      this.latest = latest;
      this.figures = figures;
      this.failure = failure;
      this.finished = finished;
    }
  }

  /**
   * The leader's answer: stop (commit and end), halt (end without committing: fenced, or the lease
   * is lost), and, when the slot's version is not the leader's, its new assignment and the
   * partitions of it that may start at the flow's `start` (the others start at their earliest).
   */
  static final class Orders {
    final boolean stop;
    final boolean halt;
    final CopyLoop.Assignment assignment; // null when the slot holds the current one
    final Set<TopicPartition> fresh;

    Orders(boolean stop, boolean halt, CopyLoop.Assignment assignment, Set<TopicPartition> fresh) {
      this.stop = stop;
      this.halt = halt;
      this.assignment = assignment;
      this.fresh = fresh;
    }

    static Orders halted() {
      return new Orders(true, true, null, Set.of());
    }
  }

  static String write(Report report) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("run", report.run);
    out.put("slot", report.slot);
    out.put("attempt", report.attempt);
    out.put("seen", report.seen);
    out.put("applied", report.applied);
    out.put("polled", report.polled);
    out.put("full", report.full);
    out.put("done", offsets(report.done));
    out.put("latest", offsets(report.latest));
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("latency", report.figures.latency);
    figures.put("buckets", report.figures.buckets);
    List<List<Object>> partitions = new ArrayList<>();
    report.figures.partitions.forEach(
        (partition, values) ->
            partitions.add(
                List.of(
                    partition.topic(),
                    partition.partition(),
                    values[LoopFigures.RECORDS],
                    values[LoopFigures.BYTES],
                    values[LoopFigures.LATENCY],
                    values[LoopFigures.NEWEST])));
    figures.put("partitions", partitions);
    List<List<Object>> losses = new ArrayList<>();
    for (LoopFigures.Loss loss : report.figures.losses) {
      losses.add(
          List.of(
              loss.partition.topic(), loss.partition.partition(), loss.kind, loss.from, loss.to));
    }
    figures.put("losses", losses);
    out.put("figures", figures);
    out.put("failure", report.failure);
    out.put("finished", report.finished);
    return JSON.writeValueAsString(out);
  }

  static Report readReport(String text) throws Exception {
    Map<String, Object> in = JSON.readValue(text, new TypeReference<Map<String, Object>>() {});
    Map<?, ?> figures = (Map<?, ?>) in.get("figures");
    List<?> bucketList = (List<?>) figures.get("buckets");
    long[] buckets = new long[bucketList.size()];
    for (int i = 0; i < buckets.length; i++) {
      buckets[i] = ((Number) bucketList.get(i)).longValue();
    }
    Map<TopicPartition, long[]> partitions = new HashMap<>();
    for (Object item : (List<?>) figures.get("partitions")) {
      List<?> row = (List<?>) item;
      partitions.put(
          partition(row),
          new long[] {number(row, 2), number(row, 3), number(row, 4), number(row, 5)});
    }
    List<LoopFigures.Loss> losses = new ArrayList<>();
    for (Object item : (List<?>) figures.get("losses")) {
      List<?> row = (List<?>) item;
      losses.add(
          new LoopFigures.Loss(
              partition(row), (String) row.get(2), number(row, 3), number(row, 4)));
    }
    return new Report(
        (String) in.get("run"),
        ((Number) in.get("slot")).intValue(),
        ((Number) in.get("attempt")).intValue(),
        ((Number) in.get("seen")).intValue(),
        ((Number) in.get("applied")).intValue(),
        ((Number) in.get("polled")).longValue(),
        !Boolean.FALSE.equals(in.get("full")),
        readOffsets(in.get("done")),
        readOffsets(in.get("latest")),
        new LoopFigures.Taken(
            ((Number) figures.get("latency")).longValue(), buckets, partitions, losses),
        (String) in.get("failure"),
        Boolean.TRUE.equals(in.get("finished")));
  }

  static String write(Orders orders) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("stop", orders.stop);
    out.put("halt", orders.halt);
    if (orders.assignment != null) {
      out.put("version", orders.assignment.version);
      out.put("partitions", partitions(orders.assignment.partitions));
      out.put("topics", orders.assignment.topics);
      out.put("fresh", partitions(orders.fresh));
    }
    return JSON.writeValueAsString(out);
  }

  static Orders readOrders(String text) throws Exception {
    Map<String, Object> in = JSON.readValue(text, new TypeReference<Map<String, Object>>() {});
    boolean stop = Boolean.TRUE.equals(in.get("stop"));
    boolean halt = Boolean.TRUE.equals(in.get("halt"));
    if (!in.containsKey("version")) {
      return new Orders(stop, halt, null, Set.of());
    }
    Map<String, String> topics = new HashMap<>();
    ((Map<?, ?>) in.get("topics")).forEach((k, v) -> topics.put((String) k, (String) v));
    CopyLoop.Assignment assignment =
        new CopyLoop.Assignment(
            ((Number) in.get("version")).intValue(), readPartitions(in.get("partitions")), topics);
    return new Orders(stop, halt, assignment, readPartitions(in.get("fresh")));
  }

  private static List<List<Object>> offsets(Map<TopicPartition, Long> offsets) {
    List<List<Object>> rows = new ArrayList<>();
    offsets.forEach((at, offset) -> rows.add(List.of(at.topic(), at.partition(), offset)));
    return rows;
  }

  private static Map<TopicPartition, Long> readOffsets(Object rows) {
    Map<TopicPartition, Long> found = new HashMap<>();
    for (Object item : (List<?>) rows) {
      List<?> row = (List<?>) item;
      found.put(partition(row), number(row, 2));
    }
    return found;
  }

  private static List<List<Object>> partitions(Set<TopicPartition> partitions) {
    List<List<Object>> rows = new ArrayList<>();
    for (TopicPartition at : partitions) {
      rows.add(List.of(at.topic(), at.partition()));
    }
    return rows;
  }

  private static Set<TopicPartition> readPartitions(Object rows) {
    Set<TopicPartition> found = new HashSet<>();
    for (Object item : (List<?>) rows) {
      found.add(partition((List<?>) item));
    }
    return found;
  }

  private static TopicPartition partition(List<?> row) {
    return new TopicPartition((String) row.get(0), ((Number) row.get(1)).intValue());
  }

  private static long number(List<?> row, int index) {
    return ((Number) row.get(index)).longValue();
  }
}
