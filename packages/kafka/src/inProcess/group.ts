import type { TopicPartition } from "../client/link.js";

/** The partitions of a topic, as the group's assignor asks for them. */
export interface PartitionCounts {
  partitions(topic: string): number | undefined;
}

/** A member as its group drives it. */
export interface GroupMember {
  readonly id: number;
  readonly topics: readonly string[];
  /** `roundrobin` spreads partition by partition; anything else assigns contiguous ranges. */
  readonly strategy: string;
  /** Gives back every partition it holds (an eager rebalance takes them all). */
  revokeAll(): Promise<void>;
  /** Takes its share of the new assignment, possibly none. */
  assign(partitions: readonly TopicPartition[]): Promise<void>;
}

/**
 * A consumer group: its members, and the offsets committed for it. Every join and leave is an
 * eager rebalance, run one at a time: every member gives back what it holds, then each takes its
 * share, as a classic group with the range or round-robin assignor does.
 */
export class InProcessGroup {
  readonly committed = new Map<string, bigint>();
  readonly #counts: PartitionCounts;
  #members: GroupMember[] = [];
  #rebalancing: Promise<void> = Promise.resolve();

  constructor(counts: PartitionCounts) {
    this.#counts = counts;
  }

  join(member: GroupMember): Promise<void> {
    this.#members.push(member);
    return this.#rebalance();
  }

  leave(member: GroupMember): Promise<void> {
    const before = this.#members.length;
    this.#members = this.#members.filter((m) => m !== member);
    if (this.#members.length === before) return this.#rebalancing;
    return this.#rebalance();
  }

  /** Partitions appeared (a topic created after the members joined): spread them too. */
  refresh(): Promise<void> {
    return this.#rebalance();
  }

  #rebalance(): Promise<void> {
    this.#rebalancing = this.#rebalancing
      .catch(() => undefined)
      .then(async () => {
        const members = [...this.#members];
        for (const member of members) await member.revokeAll();
        const shares = this.#assign(members);
        for (const member of members) await member.assign(shares.get(member) ?? []);
      });
    return this.#rebalancing;
  }

  #assign(members: readonly GroupMember[]): Map<GroupMember, TopicPartition[]> {
    const shares = new Map<GroupMember, TopicPartition[]>(members.map((m) => [m, []]));
    const sorted = [...members].sort((a, b) => a.id - b.id);
    const topics = [...new Set(sorted.flatMap((m) => m.topics))].sort();
    const roundRobin = sorted[0]?.strategy === "roundrobin";
    if (roundRobin) {
      let next = 0;
      for (const topic of topics) {
        const readers = sorted.filter((m) => m.topics.includes(topic));
        for (let p = 0; p < (this.#counts.partitions(topic) ?? 0); p++) {
          // Round robin over all members, skipping those that do not read this topic.
          for (let tries = 0; tries < sorted.length; tries++) {
            const member = sorted[next++ % sorted.length]!;
            if (readers.includes(member)) {
              shares.get(member)!.push({ topic, partition: p });
              break;
            }
          }
        }
      }
      return shares;
    }
    for (const topic of topics) {
      const readers = sorted.filter((m) => m.topics.includes(topic));
      const count = this.#counts.partitions(topic) ?? 0;
      const each = Math.floor(count / Math.max(1, readers.length));
      const extra = count % Math.max(1, readers.length);
      let p = 0;
      readers.forEach((member, i) => {
        const take = each + (i < extra ? 1 : 0);
        for (let k = 0; k < take; k++) shares.get(member)!.push({ topic, partition: p++ });
      });
    }
    return shares;
  }
}
