import { RustStreamError } from "@ruststream/core";
import { positive } from "@ruststream/core/broker";

/**
 * A priority group of a JetStream pull consumer (NATS 2.11 or newer): which of the apps pulling
 * from one durable consumer the server hands its messages to.
 *
 * - `pinned`: the server pins one client and hands messages only to its pulls; the others get
 *   nothing until the pinned one has not pulled for `pinTtlMs` (the consumer's `priority_timeout`,
 *   default the server's, 2 minutes), when the server pins the next. A warm standby.
 * - `overflow`: every app pulls, but an app giving `minPending` or `minAckPending` is served only
 *   while the consumer has at least that many messages not yet delivered (`num_pending`, counting
 *   the one handed out), or delivered and not settled (`num_ack_pending`). Without either, an app
 *   is served as usual.
 * - `prioritized` (NATS 2.12 or newer): each app's pulls carry its `priority`, 0 (first) to 9; the
 *   server serves the waiting pulls of the lowest number first, the others only when none waits.
 */
export type PriorityGroup =
  | {
      readonly policy: "pinned";
      /** The group's name (1 to 16 letters, digits, `-` or `_`), the same in every app. */
      readonly group: string;
      /** How long the pinned client may go without pulling before the server pins another. */
      readonly pinTtlMs?: number;
    }
  | {
      readonly policy: "overflow";
      readonly group: string;
      /** This app is served only while at least this many messages wait undelivered. */
      readonly minPending?: number;
      /** This app is served only while at least this many messages wait for a settlement. */
      readonly minAckPending?: number;
    }
  | {
      readonly policy: "prioritized";
      readonly group: string;
      /** This app's pulls' priority: 0 (served first) to 9. */
      readonly priority: number;
    };

/** A priority group checked, as the consumer's settings carry it. */
export type PrioritySettings =
  | { readonly policy: "pinned"; readonly group: string; readonly pinTtlMs: number | undefined }
  | {
      readonly policy: "overflow";
      readonly group: string;
      readonly minPending: number | undefined;
      readonly minAckPending: number | undefined;
    }
  | { readonly policy: "prioritized"; readonly group: string; readonly priority: number };

const what = "JetStreamSubject priority";

/** The priority option checked where it is given: a durable's, with a group name the server takes. */
export function checkPriority(
  priority: PriorityGroup | undefined,
  durable: string | undefined,
): PrioritySettings | undefined {
  if (priority === undefined) return undefined;
  if (typeof priority !== "object" || priority === null) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: give { policy: "pinned" | "overflow" | "prioritized", group }, not ${JSON.stringify(priority)}`,
    );
  }
  // The group shares a consumer between apps; an ephemeral consumer is one app's alone.
  if (durable === undefined) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: a priority group shares a consumer between apps: give the consumer a name (durable)`,
    );
  }
  const { group } = priority;
  if (typeof group !== "string" || !/^[A-Za-z0-9_-]{1,16}$/.test(group)) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} group: ${JSON.stringify(group)} is not a priority group name (1 to 16 letters, digits, "-" or "_")`,
    );
  }
  if (priority.policy === "pinned") {
    return {
      policy: "pinned",
      group,
      pinTtlMs:
        priority.pinTtlMs === undefined ? undefined : positive("pinTtlMs", priority.pinTtlMs, 1),
    };
  }
  if (priority.policy === "overflow") {
    return {
      policy: "overflow",
      group,
      minPending: threshold("minPending", priority.minPending),
      minAckPending: threshold("minAckPending", priority.minAckPending),
    };
  }
  if (priority.policy === "prioritized") {
    const level = priority.priority;
    if (!Number.isInteger(level) || level < 0 || level > 9) {
      throw new RustStreamError(
        "invalid-argument",
        `${what} priority: ${String(level)} is not a priority level: a whole number from 0 (served first) to 9`,
      );
    }
    return { policy: "prioritized", group, priority: level };
  }
  throw new RustStreamError(
    "invalid-argument",
    `${what} policy: "${String((priority as { policy: unknown }).policy)}" is not a priority policy: "pinned", "overflow" or "prioritized"`,
  );
}

// The client leaves a threshold of 0 out of a pull (it would be "more than none", a plain pull).
function threshold(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} ${name}: ${String(value)} is not a count of messages (a whole number, 1 or more; leave it out for an app served as usual)`,
    );
  }
  return value;
}

/** The server's name of each policy. */
const serverPolicy = {
  pinned: "pinned_client",
  overflow: "overflow",
  prioritized: "prioritized",
} as const;

/** The consumer's settings the group asks of the server (the same in every app of the group). */
export function priorityConfig(priority: PrioritySettings | undefined) {
  if (priority === undefined) return {};
  return {
    priority_groups: [priority.group],
    priority_policy: serverPolicy[priority.policy],
    ...(priority.policy === "pinned" && priority.pinTtlMs !== undefined
      ? { priority_timeout: priority.pinTtlMs * 1_000_000 }
      : {}),
  };
}

/** What each pull of this app carries: the group, and for overflow this app's thresholds. */
export function priorityPull(priority: PrioritySettings | undefined) {
  if (priority === undefined) return {};
  if (priority.policy === "pinned") return { group: priority.group };
  if (priority.policy === "prioritized")
    return { group: priority.group, priority: priority.priority };
  return {
    group: priority.group,
    ...(priority.minPending === undefined ? {} : { min_pending: priority.minPending }),
    ...(priority.minAckPending === undefined ? {} : { min_ack_pending: priority.minAckPending }),
  };
}

/** A consumer's priority settings as the server reports them, for `priorityDifference`. */
export interface ServerPriority {
  readonly priority_groups?: readonly string[] | undefined;
  readonly priority_policy?: string | undefined;
  readonly priority_timeout?: number | undefined;
}

/**
 * How an existing consumer's priority settings differ from what this app asks, in words, or
 * `undefined` when they agree. A timeout this app leaves out agrees with any the server has.
 */
export function priorityDifference(
  existing: ServerPriority,
  priority: PrioritySettings | undefined,
): string | undefined {
  const theirs = {
    policy:
      existing.priority_policy === undefined || existing.priority_policy === "none"
        ? "none"
        : existing.priority_policy,
    groups: (existing.priority_groups ?? []).join(","),
  };
  const ours = {
    policy: priority === undefined ? "none" : serverPolicy[priority.policy],
    groups: priority?.group ?? "",
  };
  const differences: string[] = [];
  if (theirs.policy !== ours.policy)
    differences.push(`priority_policy is "${theirs.policy}", this app asks "${ours.policy}"`);
  if (theirs.groups !== ours.groups)
    differences.push(`priority_groups is [${theirs.groups}], this app asks [${ours.groups}]`);
  const ttl = priority?.policy === "pinned" ? priority.pinTtlMs : undefined;
  const theirTtl = (existing.priority_timeout ?? 0) / 1_000_000;
  if (ttl !== undefined && theirTtl !== ttl)
    differences.push(`priority_timeout is ${theirTtl} ms, this app asks pinTtlMs ${ttl}`);
  return differences.length === 0 ? undefined : differences.join("; ");
}

/** The refusal of a durable that exists with another priority group, naming the difference. */
export function otherPriorityGroup(
  stream: string,
  durable: string,
  difference: string,
  cause?: unknown,
): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `the consumer "${durable}" on the JetStream stream "${stream}" exists with another priority group: ${difference}. Give every app of the durable the same priority option, or delete the consumer (nats consumer rm ${stream} ${durable}) to make it anew`,
    cause === undefined ? undefined : { cause },
  );
}
