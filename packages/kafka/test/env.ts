import { randomUUID } from "node:crypto";

// Live tests read the addresses the global setup exported. A missing one means the cluster was not
// started: the test fails with the fix instead of skipping.
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new Error(
      `${name} is not set: the kafka project's global setup (ensureBrokers(["kafka"])) did not run or failed; run the tests with \`npx vitest run --project kafka\` from the repository root, or \`pnpm brokers up kafka\``,
    );
  }
  return value;
}

/** A topic or group name no other run used. */
export function uniqueName(prefix: string): string {
  return `rs-test.${prefix}.${randomUUID().slice(0, 8)}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const bytes = (text: string): Uint8Array => encoder.encode(text);
export const text = (value: Uint8Array): string => decoder.decode(value);
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
