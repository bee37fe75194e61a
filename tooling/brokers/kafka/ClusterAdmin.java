// What tests of the three-node cluster ask it, through the Java client's Admin API (the one client
// that reports a partition's leader and ISR and a group's committed offsets with no wrapper between).
// Run as a single-file program by src/kafkaCluster.mjs: java -cp '<libs>/*' ClusterAdmin.java ...
// Each command waits in this one JVM (a JVM start costs seconds on 2 cores), then prints what it saw
// last, one line per partition, whether or not the wait was met: the caller asserts on it.
//
//   describe <bootstrap> <topic> <isr size> <timeout ms>
//       waits until every partition has a leader and at least <isr size> replicas in sync;
//       prints "<partition> <leader> <replicas,> <isr,>" (leader -1: none)
//   offsets <bootstrap> <group> <topic> <timeout ms>
//       waits until the group's committed offset reaches the end of every partition;
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
    if (args.length != 5 || !(args[0].equals("describe") || args[0].equals("offsets"))) {
      System.err.println("usage: ClusterAdmin describe <bootstrap> <topic> <isr size> <timeout ms>");
      System.err.println("       ClusterAdmin offsets <bootstrap> <group> <topic> <timeout ms>");
      System.exit(2);
    }
    Properties props = new Properties();
    props.put("bootstrap.servers", args[1]);
    // A node may be down: a request to it fails fast and the next attempt asks another.
    props.put("request.timeout.ms", "5000");
    props.put("default.api.timeout.ms", "10000");
    long deadline = System.currentTimeMillis() + Long.parseLong(args[4]);
    try (Admin admin = Admin.create(props)) {
      List<String> last = List.of();
      Exception lastError = null;
      for (;;) {
        try {
          last = args[0].equals("describe")
              ? describe(admin, args[2], Integer.parseInt(args[3]))
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
  static List<String> describe(Admin admin, String topic, int isrSize) throws Exception {
    TopicDescription description =
        admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    List<String> lines = new ArrayList<>();
    boolean met = true;
    for (TopicPartitionInfo p : description.partitions()) {
      Node leader = p.leader();
      int leaderId = leader == null || leader.isEmpty() ? -1 : leader.id();
      met &= leaderId >= 0 && p.isr().size() >= isrSize;
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
