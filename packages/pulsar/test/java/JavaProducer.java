// Sends, with Pulsar's own Java client, ten keyed messages with a property to <topic>-<codec> for
// each compression codec named on the command line, in batches of five: what our consumer must
// read exactly as the Java client wrote it.
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;

public class JavaProducer {
  public static void main(String[] args) throws Exception {
    String url = args[0];
    String topic = args[1];
    try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build()) {
      for (int c = 2; c < args.length; c++) {
        String codec = args[c];
        try (Producer<byte[]> producer = client.newProducer()
            .topic(topic + "-" + codec.toLowerCase())
            .compressionType(CompressionType.valueOf(codec))
            .enableBatching(true)
            .batchingMaxMessages(5)
            .batchingMaxPublishDelay(1, TimeUnit.SECONDS)
            .create()) {
          for (int i = 0; i < 10; i++) {
            String text = "java " + codec + " " + i + " " + "abcdefgh".repeat(i * 10);
            producer.newMessage().key("k" + i).property("n", Integer.toString(i)).value(text.getBytes("UTF-8")).sendAsync();
          }
          producer.flush();
        }
      }
    }
  }
}
