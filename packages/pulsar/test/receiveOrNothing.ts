import { isRustStreamError } from "@ruststream/core";
import type { Message } from "../src/wire/index.js";

/**
 * The next message, or `undefined` once `timeoutMs` passed with none. Only the consumer's own
 * `timeout` means "nothing arrived": any other failure (the consumer closed, the broker refusing)
 * fails the test instead of passing for silence.
 */
export async function receiveOrNothing(
  consumer: { receive(options: { timeoutMs: number }): Promise<Message> },
  timeoutMs: number,
): Promise<Message | undefined> {
  try {
    return await consumer.receive({ timeoutMs });
  } catch (error) {
    if (isRustStreamError(error, "timeout")) return undefined;
    throw error;
  }
}
