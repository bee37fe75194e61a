// The Java side of tooling/bench's Pulsar benchmark: Pulsar's own Java client, kept running for the
// whole bench so its JIT is as warm as the Node process it is compared with. It reads one command a
// line on stdin and answers one JSON line on stdout:
//
//   produce <topic> <count> <window>   sends <count> orders (ids 0..count-1), at most <window> unconfirmed
//   consume <topic> <subscription> <count>   drains <count> orders from a Shared subscription, acking each
//
// Both time themselves from the first send (or the first message in hand) to the last receipt (or the
// last ack call), as the Node rows do. Arguments: the service URL and the order template (base64): 512
// bytes of JSON whose id is ten ASCII digits at byte 6, 1000000000 + the order's number.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

public class PulsarBenchWorker {
  static final int ID_AT = 6;
  static final int ID_DIGITS = 10;
  static final long ID_BASE = 1_000_000_000L;

  static String url;
  static byte[] template;

  public static void main(String[] args) throws Exception {
    url = args[0];
    template = Base64.getDecoder().decode(args[1]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    System.out.println("{\"ready\":true}");
    System.out.flush();
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] cmd = line.trim().split(" ");
      String answer;
      try {
        switch (cmd[0]) {
          case "produce":
            answer = produce(cmd[1], Integer.parseInt(cmd[2]), Integer.parseInt(cmd[3]));
            break;
          case "consume":
            answer = consume(cmd[1], cmd[2], Integer.parseInt(cmd[3]));
            break;
          default:
            answer = error("unknown command: " + line);
        }
      } catch (Exception e) {
        answer = error(e.toString());
      }
      System.out.println(answer);
      System.out.flush();
    }
  }

  static String error(String message) {
    return "{\"error\":\"" + message.replace("\\", "\\\\").replace("\"", "'").replace("\n", " ") + "\"}";
  }

  /** This process's CPU time (every thread), in seconds. */
  static double cpuSeconds() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime()
        / 1e9;
  }

  /** The order numbered n: the template with its id written in place. */
  static byte[] order(long n) {
    byte[] payload = template.clone();
    long id = ID_BASE + n;
    for (int i = ID_AT + ID_DIGITS - 1; i >= ID_AT; i--) {
      payload[i] = (byte) ('0' + (id % 10));
      id /= 10;
    }
    return payload;
  }

  /** The order's number read back from its payload. */
  static long orderNumber(byte[] payload) {
    long id = 0;
    for (int i = ID_AT; i < ID_AT + ID_DIGITS; i++) id = id * 10 + (payload[i] - '0');
    return id - ID_BASE;
  }

  static String produce(String topic, int count, int window) throws Exception {
    try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build();
        // The same batching as the Node producer's: 1000 messages, 128 KiB, 1 ms; no compression.
        // At most `window` messages unconfirmed: sendAsync blocks when that many are pending.
        Producer<byte[]> producer =
            client
                .newProducer()
                .topic(topic)
                .enableBatching(true)
                .batchingMaxMessages(1000)
                .batchingMaxBytes(128 * 1024)
                .batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS)
                .maxPendingMessages(window)
                .blockIfQueueFull(true)
                .sendTimeout(30, TimeUnit.SECONDS)
                .create()) {
      long[] confirmed = {0};
      long[] answered = {0};
      Throwable[] failed = {null};
      double cpuBefore = cpuSeconds();
      long began = System.nanoTime();
      for (int n = 0; n < count; n++) {
        producer
            .sendAsync(order(n))
            .whenComplete(
                (id, error) -> {
                  synchronized (confirmed) {
                    if (error != null) failed[0] = error;
                    else confirmed[0]++;
                    answered[0]++;
                    confirmed.notifyAll();
                  }
                });
      }
      producer.flush();
      double seconds = (System.nanoTime() - began) / 1e9;
      double cpu = cpuSeconds() - cpuBefore;
      // flush() returns at the last receipt; the callbacks counting them may still be running.
      synchronized (confirmed) {
        long deadline = System.currentTimeMillis() + 10_000;
        while (answered[0] < count && System.currentTimeMillis() < deadline) confirmed.wait(100);
        if (failed[0] != null) return error("send failed: " + failed[0]);
        return "{\"messages\":" + confirmed[0] + ",\"seconds\":" + seconds + ",\"cpuSeconds\":" + cpu + "}";
      }
    }
  }

  static String consume(String topic, String subscription, int count) throws Exception {
    try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build()) {
      Consumer<byte[]> consumer =
          client
              .newConsumer()
              .topic(topic)
              .subscriptionName(subscription)
              .subscriptionType(SubscriptionType.Shared)
              .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
              .receiverQueueSize(1000)
              .subscribe();
      long sum = 0;
      int seen = 0;
      long began = 0;
      double cpuBefore = 0;
      while (seen < count) {
        Message<byte[]> message = consumer.receive(10, TimeUnit.SECONDS);
        if (message == null) break;
        if (seen == 0) {
          began = System.nanoTime();
          cpuBefore = cpuSeconds();
        }
        byte[] payload = message.getValue();
        if (payload.length != template.length) {
          consumer.close();
          return error("a payload of " + payload.length + " bytes");
        }
        sum += orderNumber(payload);
        seen++;
        consumer.acknowledgeAsync(message);
      }
      double seconds = (System.nanoTime() - began) / 1e9;
      double cpu = cpuSeconds() - cpuBefore;
      // Closing sends the acks the client still groups.
      consumer.close();
      return "{\"messages\":" + seen + ",\"seconds\":" + seconds + ",\"cpuSeconds\":" + cpu + ",\"idSum\":\"" + sum + "\"}";
    }
  }
}
