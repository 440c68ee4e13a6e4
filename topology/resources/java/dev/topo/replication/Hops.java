package dev.topo.replication;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * topo's loop rules and provenance stamps for one flow, the copy loop's version of what the Spark
 * query states in SQL ({@code topology/jobs.py} holds the reference: {@code forwards} and {@code
 * copied_headers}).
 *
 * <p>A record is not copied when its {@code topo-provenance} header names the flow's target (it has
 * been there) or when its last hop is a cluster the flow does not forward from. A copied record
 * keeps its own headers in order; with provenance on, topo's two headers are replaced by the
 * provenance with the source appended and the offsets with {@code source:offset} appended.
 */
final class Hops {
  static final String PROVENANCE = "topo-provenance";
  static final String OFFSETS = "topo-offsets";

  private final String source;
  private final String target;
  private final boolean provenance;
  private final Set<String> noForwardFrom;
  // A record's first hop (no topo header yet), most records: its provenance is the source's name
  // and its offsets `source:offset`, written from these bytes without a String on the way.
  private final byte[] sourceName;
  private final byte[] sourceHop;

  Hops(String source, String target, boolean provenance, Set<String> noForwardFrom) {
    this.source = source;
    this.target = target;
    this.provenance = provenance;
    this.noForwardFrom = noForwardFrom;
    this.sourceName = source.getBytes(StandardCharsets.UTF_8);
    this.sourceHop = (source + ":").getBytes(StandardCharsets.UTF_8);
  }

  /** The headers of the record's copy, or null when the record is not to be copied. */
  Headers copied(Headers headers, long offset) {
    if (!provenance || offset < 0 || hasOurs(headers)) {
      return followed(headers, offset);
    }
    Header[] theirs = headers.toArray();
    Header[] all = Arrays.copyOf(theirs, theirs.length + 2);
    all[theirs.length] = new RecordHeader(PROVENANCE, sourceName.clone());
    all[theirs.length + 1] = new RecordHeader(OFFSETS, firstHop(offset));
    return new RecordHeaders(all);
  }

  private static boolean hasOurs(Headers headers) {
    for (Header header : headers) {
      String key = header.key();
      if (PROVENANCE.equals(key) || OFFSETS.equals(key)) {
        return true;
      }
    }
    return false;
  }

  /** `source:offset` in UTF-8, the digits written in place. */
  private byte[] firstHop(long offset) {
    int digits = 1;
    for (long rest = offset / 10; rest > 0; rest /= 10) {
      digits++;
    }
    byte[] out = Arrays.copyOf(sourceHop, sourceHop.length + digits);
    long rest = offset;
    for (int at = out.length - 1; at >= sourceHop.length; at--) {
      out[at] = (byte) ('0' + rest % 10);
      rest /= 10;
    }
    return out;
  }

  /** {@link #copied} of a record that has been replicated before (or with provenance off). */
  private Headers followed(Headers headers, long offset) {
    String visited = null;
    String hops = null;
    boolean ours = false;
    for (Header header : headers) {
      String key = header.key();
      if (PROVENANCE.equals(key)) {
        visited = text(header.value());
        ours = true;
      } else if (OFFSETS.equals(key)) {
        hops = text(header.value());
        ours = true;
      }
    }
    List<String> clusters = visited(visited);
    if (clusters.contains(target)) {
      return null;
    }
    if (!clusters.isEmpty() && noForwardFrom.contains(clusters.get(clusters.size() - 1))) {
      return null;
    }
    if (!provenance) {
      return headers;
    }
    RecordHeaders out = new RecordHeaders();
    if (ours) {
      for (Header header : headers) {
        if (!PROVENANCE.equals(header.key()) && !OFFSETS.equals(header.key())) {
          out.add(header);
        }
      }
    } else {
      for (Header header : headers) {
        out.add(header);
      }
    }
    clusters.add(source);
    out.add(PROVENANCE, String.join(",", clusters).getBytes(StandardCharsets.UTF_8));
    String hop = source + ":" + offset;
    String all = hops == null || hops.isEmpty() ? hop : hops + "," + hop;
    out.add(OFFSETS, all.getBytes(StandardCharsets.UTF_8));
    return out;
  }

  private static String text(byte[] value) {
    return value == null ? null : new String(value, StandardCharsets.UTF_8);
  }

  private static List<String> visited(String provenance) {
    List<String> names = new ArrayList<>();
    if (provenance != null) {
      for (String name : provenance.split(",")) {
        if (!name.isEmpty()) {
          names.add(name);
        }
      }
    }
    return names;
  }
}
