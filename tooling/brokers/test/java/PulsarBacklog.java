// Pulsar's own Java client (the broker's jars), run as a single-file program by the restart test:
//
//   before <url> <topic> <subscription> <count> <acked>
//     subscribes (Shared, from the earliest message), sends "0".."count-1" (each confirmed
//     persisted), receives and acknowledges the first <acked> of them, each acknowledgement
//     confirmed by the broker, the last one over a second after the others: the broker writes a
//     cursor's position at most once a second (managedLedgerDefaultMarkDeleteRateLimit), so the
//     last acknowledgement is the one that puts the whole acknowledged prefix on disk.
//   after <url> <topic> <subscription>
//     subscribes to the same subscription and prints "delivered <n>" for each message it delivers
//     until nothing comes for 3 s (30 s for the first: the restarted broker loads the topic on the first lookup).
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

public class PulsarBacklog {
  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String url = args[1];
    String topic = args[2];
    String subscription = args[3];
    try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build();
        Consumer<byte[]> consumer = client.newConsumer()
            .topic(topic)
            .subscriptionName(subscription)
            .subscriptionType(SubscriptionType.Shared)
            .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
            .isAckReceiptEnabled(true)
            .subscribe()) {
      if (mode.equals("before")) {
        int count = Integer.parseInt(args[4]);
        int acked = Integer.parseInt(args[5]);
        try (Producer<byte[]> producer = client.newProducer().topic(topic).enableBatching(false).create()) {
          for (int i = 0; i < count; i++) producer.send(Integer.toString(i).getBytes("UTF-8"));
        }
        for (int i = 0; i < acked; i++) {
          Message<byte[]> message = consumer.receive(30, TimeUnit.SECONDS);
          if (message == null) throw new IllegalStateException("message " + i + " never came");
          String text = new String(message.getValue(), "UTF-8");
          if (!text.equals(Integer.toString(i))) throw new IllegalStateException("expected " + i + ", got " + text);
          if (i == acked - 1) Thread.sleep(1500);
          consumer.acknowledge(message);
        }
      } else {
        int waitSeconds = 30;
        for (;;) {
          Message<byte[]> message = consumer.receive(waitSeconds, TimeUnit.SECONDS);
          if (message == null) break;
          System.out.println("delivered " + new String(message.getValue(), "UTF-8"));
          consumer.acknowledge(message);
          waitSeconds = 3;
        }
      }
    }
  }
}
