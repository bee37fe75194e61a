// The load: keyed messages, each carrying its sequence number, published evenly over a window.
import type { ConnectedBroker, Publisher } from "@ruststream/core";
import type { Published } from "./checker.js";
import type { Random } from "./random.js";

/** The scenario's messages: seq 0..n-1, each on a key the seeded generator picks. */
export function plannedMessages(random: Random, messages: number, keys: number): Published[] {
  return Array.from({ length: messages }, (_, seq) => ({
    key: `k${random.int(0, keys - 1)}`,
    seq,
  }));
}

/** The body a service decodes (JSON): key and sequence number. */
export const bodyOf = (message: Published): Uint8Array =>
  new TextEncoder().encode(JSON.stringify({ k: message.key, s: message.seq }));

/** Publishes one message; rejects if the broker did not confirm it. */
export type PublishOne = (message: Published) => Promise<void>;

/**
 * Publishes every message in order, paced so the last goes out at the end of `windowMs`
 * (0: as fast as the broker confirms). A publish that fails or hangs past `retryAfterMs` is sent
 * again: the first may still land, which the checker then sees as a duplicate, never as a loss.
 * With `keyBySequence`, a tick's messages of one key go one after another, each once the one before
 * was confirmed (the keys side by side): for a broker whose order is the order its writes commit
 * (a PostgreSQL table's rows, inserted over a pool of connections), where two writes of a key at
 * once have no order between them.
 */
export async function publishPaced(
  messages: readonly Published[],
  publish: PublishOne,
  windowMs: number,
  log: (line: string) => void,
  retryAfterMs = 5_000,
  keyBySequence = false,
): Promise<void> {
  const started = performance.now();
  const tick = 50;
  const perTick =
    windowMs === 0 ? 256 : Math.max(1, Math.ceil((messages.length * tick) / windowMs));
  for (let i = 0; i < messages.length; i += perTick) {
    const chunk = messages.slice(i, i + perTick);
    const surely = (message: Published) => publishSurely(message, publish, retryAfterMs, log);
    await Promise.all(
      keyBySequence
        ? [...byKey(chunk).values()].map(async (ofKey) => {
            for (const message of ofKey) await surely(message);
          })
        : chunk.map(surely),
    );
    if (windowMs > 0) {
      const due = started + ((i + perTick) / messages.length) * windowMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** The messages of each key, in their order. */
function byKey(messages: readonly Published[]): Map<string, Published[]> {
  const keys = new Map<string, Published[]>();
  for (const message of messages) {
    const ofKey = keys.get(message.key);
    if (ofKey === undefined) keys.set(message.key, [message]);
    else ofKey.push(message);
  }
  return keys;
}

let lastFailureLogged = Number.NEGATIVE_INFINITY;

async function publishSurely(
  message: Published,
  publish: PublishOne,
  retryAfterMs: number,
  log: (line: string) => void,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        publish(message),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no confirmation in ${retryAfterMs} ms`)),
            retryAfterMs,
          );
        }),
      ]);
      return;
    } catch (error) {
      // A broker restart fails a whole window of publishes at once: one line a second says so.
      const now = performance.now();
      if (now - lastFailureLogged >= 1_000) {
        lastFailureLogged = now;
        log(
          `[chaos] publish of seq ${message.seq} failed (attempt ${attempt}), again: ${String(error)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The load published to topic `name` through a publisher paired with `connected` (`publishPaced`'s
 * pacing and resends), each message under its key; the connection is shut down after.
 */
export async function publishLoad(
  connected: ConnectedBroker,
  publisher: Publisher<never>,
  name: string,
  messages: readonly Published[],
  windowMs: number,
  log: (line: string) => void,
  options: { readonly retryAfterMs?: number; readonly keyBySequence?: boolean } = {},
): Promise<void> {
  await publishPaced(
    messages,
    async (message) => {
      await publisher.publish({ name, payload: bodyOf(message), partitionKey: message.key });
    },
    windowMs,
    log,
    options.retryAfterMs,
    options.keyBySequence,
  );
  await connected.shutdown();
}
