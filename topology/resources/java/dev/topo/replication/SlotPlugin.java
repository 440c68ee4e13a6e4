package dev.topo.replication;

import java.util.Map;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * The channel between copy slots and their leaders: Spark's plugin RPC ({@code spark.plugins} names
 * this class; topo's sessions set it). On each executor it keeps the plugin context that {@link
 * Slot}s ask through; on the driver it hands each ask to {@link CopyLoop#receive}. The messages are
 * {@link SlotWire}'s JSON text.
 */
public final class SlotPlugin implements SparkPlugin {
  private static volatile PluginContext executor;

  @Override
  public DriverPlugin driverPlugin() {
    return new DriverPlugin() {
      @Override
      public Object receive(Object message) throws Exception {
        return CopyLoop.receive((String) message);
      }
    };
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new ExecutorPlugin() {
      @Override
      public void init(PluginContext context, Map<String, String> extraConf) {
        executor = context;
      }
    };
  }

  /** How a slot on this executor asks its leader. */
  static Slot.Channel channel() {
    PluginContext context = executor;
    if (context == null) {
      throw new IllegalStateException(
          "topo's copy slots need spark.plugins to include "
              + SlotPlugin.class.getName()
              + " (topo sets it; a setting of the topology or of spark-defaults.conf replaced it)");
    }
    return message -> (String) context.ask(message);
  }
}
