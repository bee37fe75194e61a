import type { KjsAssignerProtocol, KjsPartitionAssigner } from "./kafkajs.js";

/**
 * kafkajs's round-robin assignment, over every member's subscription and given only to members that
 * subscribe to each topic. kafkajs's own assignor, run by the group's leader, assigns the leader's
 * own topics round the whole group: with two subscriptions of one group on different topics (an
 * app's two subscribers, both in the app's group), the other topic's partitions went to nobody, and
 * the leader's own half to a member that does not read them. Here the topics are those every member
 * subscribed to (their metadata loaded first), and each partition goes to the next member in turn
 * that subscribes to its topic; when every member subscribes to the same topics that is kafkajs's
 * own assignment, partition for partition. It keeps kafkajs's protocol name, so a group may hold
 * members of both while a service rolls over.
 */
export function subscribedRoundRobin(protocol: KjsAssignerProtocol): KjsPartitionAssigner {
  return ({ cluster }) => ({
    name: "RoundRobinAssigner",
    version: 0,
    async assign({ members }) {
      const subscribed = new Map(
        members.map(({ memberId, memberMetadata }) => [
          memberId,
          new Set(protocol.MemberMetadata.decode(memberMetadata)?.topics ?? []),
        ]),
      );
      const topics = [...new Set([...subscribed.values()].flatMap((set) => [...set]))].sort();
      await cluster.addMultipleTargetTopics(topics);
      const ids = [...subscribed.keys()].sort();
      const assigned = new Map<string, Record<string, number[]>>(ids.map((id) => [id, {}]));
      let turn = 0;
      for (const topic of topics) {
        for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
          for (let tried = 0; tried < ids.length; tried++) {
            const id = ids[(turn + tried) % ids.length] as string;
            if (!subscribed.get(id)?.has(topic)) continue;
            const mine = assigned.get(id) as Record<string, number[]>;
            mine[topic] = [...(mine[topic] ?? []), partitionId];
            turn += tried + 1;
            break;
          }
        }
      }
      return ids.map((memberId) => ({
        memberId,
        memberAssignment: protocol.MemberAssignment.encode({
          version: 0,
          assignment: assigned.get(memberId) as Record<string, number[]>,
          userData: Buffer.alloc(0),
        }),
      }));
    },
    protocol({ topics }) {
      return {
        name: "RoundRobinAssigner",
        metadata: protocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
      };
    },
  });
}
