// The load published over a window with order per key kept through failures: each tick's messages
// go out together (one write to a file), and when the write fails, they are sent again one at a
// time, in order, each until it is written, before the next tick's. load.ts's publishPaced retries
// each failed message on its own timer, so after a failure a later message of a key may be written
// before an earlier one: fine where order is not checked, a false reorder where it is.
import type { Published } from "./checker.js";
import type { PublishOne } from "./load.js";

const TICK_MS = 50;
const AGAIN_MS = 200;
/** A message still refused this long after its tick failed: the broker did not recover. */
const GIVE_UP_MS = 30_000;

export async function publishInOrder(
  messages: readonly Published[],
  publish: PublishOne,
  windowMs: number,
  log: (line: string) => void,
  giveUpMs = GIVE_UP_MS,
): Promise<void> {
  const started = performance.now();
  const perTick = Math.max(1, Math.ceil((messages.length * TICK_MS) / windowMs));
  let lastLogged = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < messages.length; i += perTick) {
    const chunk = messages.slice(i, i + perTick);
    const results = await Promise.allSettled(chunk.map((message) => publish(message)));
    for (let j = 0; j < chunk.length; j++) {
      if (results[j]?.status !== "rejected") continue;
      // From the first failure on, every message of the tick is sent again in order: one that
      // was written after all is a duplicate, never a message overtaken.
      const since = performance.now();
      for (const message of chunk.slice(j)) {
        for (let attempt = 2; ; attempt++) {
          if (performance.now() - since > giveUpMs) {
            throw new Error(
              `seq ${message.seq} could not be published for ${giveUpMs / 1000} s after the fault: the publisher never recovered`,
            );
          }
          await new Promise((resolve) => setTimeout(resolve, AGAIN_MS));
          try {
            await publish(message);
            break;
          } catch (error) {
            if (performance.now() - lastLogged >= 1_000) {
              lastLogged = performance.now();
              log(
                `[chaos] publish of seq ${message.seq} failed (attempt ${attempt}), again: ${String(error)}`,
              );
            }
          }
        }
      }
      break;
    }
    const due = started + ((i + perTick) / messages.length) * windowMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
