// The cluster's own tooling for src/kafkaCluster.mjs, in one program so one JVM does each job (a
// JVM start costs seconds on 2 cores): formatting the nodes' storage, and what tests ask through
// the Java client's Admin API (the one client that reports a partition's leader and ISR and a
// group's committed offsets with nothing between). Compiled once by kafkaCluster.mjs (javac), run
// as java -cp '<libs>/*:<classes>' ClusterAdmin ... The Admin commands wait for their condition,
// then print what they saw last, one line per partition, whether or not it was met: the caller
// asserts on it.
//
//   format <cluster id> <server.properties>...
//       formats each node's storage with the one cluster id (Kafka's StorageTool, in this JVM)
//   describe <bootstrap> <topic> <isr size> <without node> <timeout ms>
//       waits until every partition has a leader and at least <isr size> replicas in sync, and
//       node <without> (-1: any) leads none and is in no ISR (the cluster has fenced it);
//       prints "<partition> <leader> <replicas,> <isr,>" (leader -1: none)
//   offsets <bootstrap> <group> <topic> <timeout ms>
//       waits until the group's committed offset reaches the end of every non-empty partition;
//       prints "<partition> <end offset> <committed offset>" (committed -1: none)
import java.util.*;
import java.util.stream.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

public class ClusterAdmin {
  public static void main(String[] args) throws Exception {
    if (args.length >= 3 && args[0].equals("format")) {
      for (int i = 2; i < args.length; i++) {
        int code = kafka.tools.StorageTool.execute(
            new String[] {"format", "-t", args[1], "-c", args[i]}, System.out);
        if (code != 0) {
          System.err.println("formatting " + args[i] + " failed (" + code + ")");
          System.exit(1);
        }
      }
      return;
    }
    boolean describe = args.length == 6 && args[0].equals("describe");
    if (!describe && !(args.length == 5 && args[0].equals("offsets"))) {
      System.err.println("usage: ClusterAdmin format <cluster id> <server.properties>...");
      System.err.println(
          "       ClusterAdmin describe <bootstrap> <topic> <isr size> <without node> <timeout ms>");
      System.err.println("       ClusterAdmin offsets <bootstrap> <group> <topic> <timeout ms>");
      System.exit(2);
    }
    Properties props = new Properties();
    props.put("bootstrap.servers", args[1]);
    // A node may be down: a request to it fails fast and the next attempt asks another.
    props.put("request.timeout.ms", "5000");
    props.put("default.api.timeout.ms", "10000");
    long deadline = System.currentTimeMillis() + Long.parseLong(args[args.length - 1]);
    try (Admin admin = Admin.create(props)) {
      List<String> last = List.of();
      Exception lastError = null;
      for (;;) {
        try {
          last = describe
              ? describe(admin, args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]))
              : offsets(admin, args[2], args[3]);
          lastError = null;
          if (!last.isEmpty() && !last.get(0).equals("waiting")) break;
        } catch (java.util.concurrent.ExecutionException e) {
          lastError = e; // the topic not there yet, a coordinator moving: ask again
        }
        if (System.currentTimeMillis() > deadline) break;
        Thread.sleep(250);
      }
      if (lastError != null && last.isEmpty()) throw lastError;
      for (String line : last) if (!line.equals("waiting")) System.out.println(line);
    }
  }

  /** The partitions' lines, led by "waiting" while the condition is not met. */
  static List<String> describe(Admin admin, String topic, int isrSize, int without)
      throws Exception {
    TopicDescription description =
        admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    List<String> lines = new ArrayList<>();
    boolean met = true;
    for (TopicPartitionInfo p : description.partitions()) {
      Node leader = p.leader();
      int leaderId = leader == null || leader.isEmpty() ? -1 : leader.id();
      met &= leaderId >= 0 && leaderId != without && p.isr().size() >= isrSize
          && p.isr().stream().noneMatch(n -> n.id() == without);
      lines.add(p.partition() + " " + leaderId + " " + ids(p.replicas()) + " " + ids(p.isr()));
    }
    if (!met) lines.add(0, "waiting");
    return lines;
  }

  static List<String> offsets(Admin admin, String group, String topic) throws Exception {
    TopicDescription description =
        admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (TopicPartitionInfo p : description.partitions()) {
      latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
    }
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends =
        admin.listOffsets(latest).all().get();
    Map<TopicPartition, OffsetAndMetadata> committed =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    List<String> lines = new ArrayList<>();
    boolean met = true;
    for (TopicPartition tp : latest.keySet().stream()
        .sorted(Comparator.comparingInt(TopicPartition::partition)).toList()) {
      long end = ends.get(tp).offset();
      OffsetAndMetadata at = committed.get(tp);
      long position = at == null ? -1 : at.offset();
      met &= end == 0 || position >= end; // an empty partition needs no commit
      lines.add(tp.partition() + " " + end + " " + position);
    }
    if (!met) lines.add(0, "waiting");
    return lines;
  }

  static String ids(List<Node> nodes) {
    return nodes.stream().map(n -> String.valueOf(n.id())).collect(Collectors.joining(","));
  }
}
