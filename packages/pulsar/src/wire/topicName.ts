// Topic names: `persistent://tenant/namespace/topic` in full, `non-persistent://…` for topics the
// broker keeps only in memory, `tenant/namespace/topic`, or a bare `topic`, which means
// `persistent://public/default/topic` as in every Pulsar client. A partition of a partitioned topic
// is the topic `<topic>-partition-<i>`.
import { RustStreamError } from "@ruststream/core";

export type TopicDomain = "persistent" | "non-persistent";

/** A parsed, validated topic name. */
export interface TopicName {
  readonly domain: TopicDomain;
  readonly tenant: string;
  readonly namespace: string;
  /** The name inside the namespace, with its `-partition-<i>` suffix if it names a partition. */
  readonly local: string;
  /** The partition this name addresses, or -1 for a whole (or non-partitioned) topic. */
  readonly partition: number;
  /** The full name, `domain://tenant/namespace/local`. */
  readonly full: string;
  /** The full name without the partition suffix. */
  readonly base: string;
}

const PARTITION_SUFFIX = "-partition-";
// Pulsar's rule for tenants and namespaces (word characters, '-', '=', ':', '.'), applied to the
// local name too: names a Rust RustStream service accepts pass here as well.
const PART = /^[-=:.\w]+$/;

function invalid(name: string, why: string): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `invalid Pulsar topic name ${JSON.stringify(name)}: ${why}; write "topic", "tenant/namespace/topic" or "persistent://tenant/namespace/topic"`,
  );
}

/** Parses and validates a topic name, expanding the short forms. Throws `invalid-argument`. */
export function parseTopicName(name: string): TopicName {
  let domain: TopicDomain = "persistent";
  let rest = name;
  const scheme = name.indexOf("://");
  if (scheme >= 0) {
    const given = name.slice(0, scheme);
    if (given !== "persistent" && given !== "non-persistent")
      throw invalid(
        name,
        `the domain must be persistent or non-persistent, not ${JSON.stringify(given)}`,
      );
    domain = given;
    rest = name.slice(scheme + 3);
  }
  const parts = rest.split("/");
  let tenant = "public";
  let namespace = "default";
  let local: string;
  if (parts.length === 1 && scheme < 0) {
    local = parts[0]!;
  } else if (parts.length === 3) {
    [tenant, namespace, local] = parts as [string, string, string];
  } else {
    throw invalid(name, `expected tenant/namespace/topic, found ${parts.length} part(s)`);
  }
  for (const [what, value] of [
    ["tenant", tenant],
    ["namespace", namespace],
    ["topic", local],
  ] as const) {
    if (value === "") throw invalid(name, `the ${what} is empty`);
    if (!PART.test(value))
      throw invalid(name, `the ${what} may hold only letters, digits and - _ . = :`);
  }
  const partition = partitionOf(local);
  const full = `${domain}://${tenant}/${namespace}/${local}`;
  const base =
    partition < 0
      ? full
      : `${domain}://${tenant}/${namespace}/${local.slice(0, local.lastIndexOf(PARTITION_SUFFIX))}`;
  return { domain, tenant, namespace, local, partition, full, base };
}

function partitionOf(local: string): number {
  const at = local.lastIndexOf(PARTITION_SUFFIX);
  if (at <= 0) return -1;
  const digits = local.slice(at + PARTITION_SUFFIX.length);
  if (!/^\d+$/.test(digits)) return -1;
  return Number(digits);
}

/** The full name of partition `index` of `topic`. */
export function partitionTopicName(topic: TopicName | string, index: number): string {
  const base = typeof topic === "string" ? parseTopicName(topic).base : topic.base;
  return `${base}${PARTITION_SUFFIX}${index}`;
}
