// @ts-check
// Programmatic entry point, used by vitest global setups: start what a test project needs and
// export the addresses into process.env for the tests.
import { brokers, parseNames } from "./registry.mjs";

/**
 * Starts the named brokers (idempotently) and sets the variables tests read.
 * @param {string[]} names
 * @param {(line: string) => void} [log]
 */
export async function ensureBrokers(names, log = (line) => process.stderr.write(`${line}\n`)) {
  for (const name of parseNames(names)) {
    const broker = brokers[name];
    const result = await broker.up(log);
    if (!result.already)
      log(`[brokers] ${name} up at ${result.address} in ${(result.ms / 1000).toFixed(1)} s`);
    Object.assign(process.env, broker.env());
  }
}

/** @param {string} name */
export function brokerEnv(name) {
  return brokers[parseNames([name])[0] ?? "redis"].env();
}

export { brokers, parseNames };
export { dropKafkajsNegativeTimeoutWarning } from "./kafkajsWarning.mjs";
export { ensureServer as ensureNatsServer } from "./natsServer.mjs";
export { requireEnv } from "./requireEnv.mjs";
export { ensureTestCertificates } from "./testCa.mjs";
