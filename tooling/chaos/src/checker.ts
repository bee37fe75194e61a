// Compares what a scenario published with what its services handled. Pure, so the tests pin it.

/** One published message: its key and its sequence number, unique within the scenario. */
export interface Published {
  readonly key: string;
  readonly seq: number;
}

/** One handling a service reported, in the order the runner received the reports. */
export interface Handled {
  readonly key: string;
  readonly seq: number;
  /**
   * When the service handled it, on the machine's monotonic clock (µs; one clock for every
   * process): the order of two handlings in two replicas, which the order the runner reads their
   * pipes is not (a key handed from one replica to the other within milliseconds may be read the
   * other way round).
   */
  readonly at?: number;
  /** The runtime's attempt it was (1 unless the broker or the runtime delivered it again). */
  readonly attempt?: number;
  /** The replica that handled it (its index, the same across its restarts). */
  readonly replica?: number;
}

export interface CheckOptions {
  /** Whether the mode promises order per key; if not, `reordered` is not counted (0). */
  readonly orderPerKey: boolean;
  /** Sequence numbers that legitimately end elsewhere (dead-lettered): not lost when unhandled. */
  readonly settledElsewhere?: ReadonlySet<number>;
}

export interface CheckResult {
  readonly messages: number;
  /** Published, never handled and not settled elsewhere. */
  readonly lost: number;
  /** Handlings beyond the first of a message. */
  readonly duplicated: number;
  /** Messages first handled after a later message of the same key was (0 where order is not promised). */
  readonly reordered: number;
  /** Handled but never published: a checker or service bug, never a broker's. */
  readonly unexpected: number;
  /** The first few lost sequence numbers, to start a diagnosis from. */
  readonly lostSample: readonly number[];
}

/**
 * `reordered` counts first handlings only: a message handled again after a crash (a duplicate) is
 * the promised at-least-once redelivery, not an order break; a message whose first handling comes
 * after a later one of its key was handled is.
 */
export function check(
  published: readonly Published[],
  handled: readonly Handled[],
  options: CheckOptions,
): CheckResult {
  const keyOf = new Map<number, string>();
  for (const message of published) keyOf.set(message.seq, message.key);
  const seen = new Set<number>();
  const highestPerKey = new Map<string, number>();
  let duplicated = 0;
  let reordered = 0;
  let unexpected = 0;
  for (const { key, seq } of inHandlingOrder(handled)) {
    if (keyOf.get(seq) !== key) {
      unexpected++;
      continue;
    }
    if (seen.has(seq)) {
      duplicated++;
      continue;
    }
    seen.add(seq);
    const highest = highestPerKey.get(key);
    if (highest !== undefined && seq < highest) reordered++;
    else highestPerKey.set(key, seq);
  }
  const lostSeqs: number[] = [];
  for (const seq of keyOf.keys()) {
    if (!seen.has(seq) && !options.settledElsewhere?.has(seq)) lostSeqs.push(seq);
  }
  lostSeqs.sort((a, b) => a - b);
  return {
    messages: keyOf.size,
    lost: lostSeqs.length,
    duplicated,
    reordered: options.orderPerKey ? reordered : 0,
    unexpected,
    lostSample: lostSeqs.slice(0, 10),
  };
}

/** The handlings in the order they happened: by `at` where every one carries it, else as received. */
function inHandlingOrder(handled: readonly Handled[]): readonly Handled[] {
  const at = (h: Handled): number => h.at ?? Number.NaN;
  if (!handled.every((h) => Number.isFinite(at(h)))) return handled;
  return [...handled].sort((a, b) => at(a) - at(b));
}

/**
 * A fan-out's check (every replica subscribes on its own and is given every message): each replica
 * checked on its own handlings, with what it may miss (`settledElsewhere`) its own, and the counts
 * summed; a handling by no replica of the run is unexpected.
 */
export function checkPerReplica(
  published: readonly Published[],
  handled: readonly Handled[],
  replicas: number,
  options: {
    readonly orderPerKey: boolean;
    readonly settledElsewhere: (replica: number) => ReadonlySet<number>;
  },
): CheckResult {
  const results = Array.from({ length: replicas }, (_, replica) =>
    check(
      published,
      handled.filter((h) => h.replica === replica),
      { orderPerKey: options.orderPerKey, settledElsewhere: options.settledElsewhere(replica) },
    ),
  );
  const strays = handled.filter(
    (h) => h.replica === undefined || h.replica < 0 || h.replica >= replicas,
  ).length;
  const sum = (field: "lost" | "duplicated" | "reordered" | "unexpected"): number =>
    results.reduce((total, r) => total + r[field], 0);
  const lostSample = [...new Set(results.flatMap((r) => r.lostSample))].sort((a, b) => a - b);
  return {
    messages: new Set(published.map((m) => m.seq)).size,
    lost: sum("lost"),
    duplicated: sum("duplicated"),
    reordered: sum("reordered"),
    unexpected: sum("unexpected") + strays,
    lostSample: lostSample.slice(0, 10),
  };
}
