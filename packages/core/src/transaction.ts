import type { Transaction } from "./capabilities.js";
import { RustStreamError } from "./errors.js";
import type { OutgoingMessage } from "./message.js";

/**
 * Runs `work` with a transaction whose publishes go to `stage` (checked and buffered by the broker)
 * while `work` runs, and are refused with `transaction-ended` once it has settled: a publish kept
 * past its transaction must never slip into the next one or go out alone. Commit or abort is the
 * caller's, after this resolves or rejects.
 */
export async function stageTransaction<T, TOptions = never>(
  work: (tx: Transaction<TOptions>) => Promise<T>,
  stage: (message: OutgoingMessage<TOptions>) => void,
): Promise<T> {
  let ended = false;
  const tx: Transaction<TOptions> = {
    publish: async (message) => {
      if (ended) {
        throw new RustStreamError(
          "transaction-ended",
          `publish to "${message.name}" after its transaction ended: publish inside the transaction's callback and await each publish`,
        );
      }
      stage(message);
    },
  };
  try {
    return await work(tx);
  } finally {
    ended = true;
  }
}
