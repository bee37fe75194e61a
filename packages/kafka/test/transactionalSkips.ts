import { type Absence, skippedName } from "@ruststream/testing/conformance";
import { it } from "vitest";
import type { Where } from "./connections.js";

/**
 * Why a test of commit "transactional" does not run on kafkajs. Owed, not impossible (the README's
 * "Not done yet"): kafkajs speaks only TxnOffsetCommit v0 and v1, which carry no group generation,
 * so a window could be committed after the partition's next owner started; sending the fenced
 * version ourselves would lift it.
 */
export const transactionalOnKafkajs: Absence = {
  kind: "notBuilt",
  what: 'commit "transactional" on kafkajs, whose transaction offset commits carry no group generation',
};

/** Why a fencing test does not run in-process: the stand-in models no fencing (README). */
export const fencingInProcess: Absence = {
  kind: "notBuilt",
  what: "transactional id fencing in the in-process stand-in",
};

type Register = (name: string, body: () => Promise<void>, timeoutMs?: number) => void;

/**
 * `it` for a test of commit "transactional" at `where`: on kafkajs, which refuses the mode, the test
 * is registered as skipped with the reason in its name, so the tally shows it instead of losing it.
 */
export function itTransactional(where: Where): Register {
  if (where !== "kafkajs") return (name, body, timeoutMs) => it(name, body, timeoutMs);
  return (name) => it.skip(skippedName(name, transactionalOnKafkajs), () => {});
}
