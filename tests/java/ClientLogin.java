import java.io.FileReader;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;

/**
 * Logs in to a cluster with Kafka's Java admin client and the settings in a properties file, for
 * tests/integration: {@code ClientLogin <file>}. Prints {@code ok} and the number of topics, or
 * {@code refused} and the class and message of the cause the broker or the client gave; exits 0
 * either way, so a test can tell a login the broker refused from a client that could not be made
 * (an exception, exit status 1).
 */
public final class ClientLogin {
  public static void main(String[] args) throws Exception {
    Properties settings = new Properties();
    try (FileReader reader = new FileReader(args[0])) {
      settings.load(reader);
    }
    try (Admin admin = Admin.create(settings)) {
      int topics = admin.listTopics().names().get(60, TimeUnit.SECONDS).size();
      System.out.println("ok " + topics);
    } catch (ExecutionException failed) {
      Throwable cause = failed.getCause();
      System.out.println("refused " + cause.getClass().getName() + ": " + cause.getMessage());
    }
  }
}
