import { createHmac } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { requireEnv, sleep } from "@ruststream/tooling-testkit";

export const serviceUrl = (): string => requireEnv("PULSAR_URL");

/** Calls Pulsar's admin REST API; throws with the answer when it is not 2xx. */
export async function admin(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${requireEnv("PULSAR_ADMIN_URL")}${path}`, init);
  if (!response.ok)
    throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

/** Creates a partitioned topic in public/default. */
export async function createPartitionedTopic(topic: string, partitions: number): Promise<void> {
  await admin(`/admin/v2/persistent/public/default/${topic}/partitions`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: String(partitions),
  });
}

/** Unloads a topic: the broker closes its producers and consumers, which must come back by themselves. */
export async function unloadTopic(topic: string): Promise<void> {
  await admin(`/admin/v2/persistent/public/default/${topic}/unload`, { method: "PUT" });
}

/** The topic's stats as the broker reports them. */
export async function topicStats(topic: string): Promise<{
  msgInCounter: number;
  publishers: unknown[];
  subscriptions: Record<string, { type: string; msgBacklog: number; consumers: unknown[] }>;
}> {
  return (await (
    await admin(`/admin/v2/persistent/public/default/${topic}/stats`)
  ).json()) as never;
}

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Where tooling/brokers keeps Pulsar's jars (its stateRoot() rule: see tooling/brokers/src/state.mjs). */
export function pulsarLibs(): string {
  const exported = process.env.PULSAR_LIBS;
  if (exported !== undefined && existsSync(join(exported, "pulsar-client-original-4.0.7.jar")))
    return exported;
  const root =
    process.env.RUSTSTREAM_BROKERS_STATE ||
    join(process.env.XDG_STATE_HOME || join(homedir(), ".local", "state"), "ruststream-brokers");
  const libs = join(root, "pulsar", "libs");
  if (!existsSync(join(libs, "pulsar-client-original-4.0.7.jar")))
    throw new Error(
      `Pulsar's jars are not in ${libs}; \`pnpm brokers up pulsar\` resolves them (the global setup runs it)`,
    );
  return libs;
}

/**
 * A token the test broker accepts, signed with its key (PULSAR_TOKEN_KEY, from tooling/brokers):
 * HS256 over the claims, as Pulsar's `tokens create` makes it.
 */
export function signToken(claims: Record<string, string>): string {
  const key = readFileSync(requireEnv("PULSAR_TOKEN_KEY"));
  const head = Buffer.from(JSON.stringify({ alg: "HS256" })).toString("base64url");
  const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const signature = createHmac("sha256", key).update(`${head}.${body}`).digest("base64url");
  return `${head}.${body}.${signature}`;
}
