import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Redis, type RedisOptions } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { exclusive, restart } from "../src/redis.mjs";
import { requireEnv } from "../src/requireEnv.mjs";

const clients: Redis[] = [];
// No retries: a refused connection must surface as an error here, not as a reconnect loop.
const noRetry: RedisOptions = {
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
  lazyConnect: true,
};

function client(url: string, options: RedisOptions = {}): Redis {
  const c = new Redis(url, { ...noRetry, ...options });
  c.on("error", () => {});
  clients.push(c);
  return c;
}

/**
 * What a refused client is told. ioredis reports the cause (TLS failure, WRONGPASS) on its "error"
 * event and rejects the command itself only with "Connection is closed."; the cause is what counts.
 */
async function refusal(c: Redis): Promise<string> {
  const seen: string[] = [];
  c.on("error", (error: Error) => seen.push(error.message));
  try {
    await c.connect();
    await c.ping();
  } catch (error) {
    seen.push((error as Error).message);
    return seen.join(" | ");
  }
  throw new Error("the server accepted a client it should have refused");
}

afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});

async function roundTrip(c: Redis): Promise<void> {
  await c.connect();
  const key = `smoke:${randomUUID()}`;
  const value = Buffer.from([0, 13, 10, 255, 1]);
  await c.set(key, value, "EX", 60);
  expect(await c.getBuffer(key)).toEqual(value);
}

describe("redis on loopback", () => {
  it("plain instance: binary round trip", async () => {
    await roundTrip(client(requireEnv("REDIS_URL")));
  });

  it("protected instance: the password and the ACL user work, no password is refused", async () => {
    await roundTrip(client(requireEnv("REDIS_PASSWORD_URL")));
    await roundTrip(client(requireEnv("REDIS_ACL_URL")));
    const url = new URL(requireEnv("REDIS_ACL_URL"));
    expect(await refusal(client(`redis://${url.host}`))).toMatch(/NOAUTH/);
    expect(await refusal(client(`redis://${url.username}:wrong@${url.host}`))).toMatch(/WRONGPASS/);
  });

  it("TLS instance: a client trusting the CA works, one without it is refused", async () => {
    const url = requireEnv("REDIS_TLS_URL");
    const ca = readFileSync(requireEnv("REDIS_TLS_CA"));
    await roundTrip(client(url, { tls: { ca, servername: "localhost" } }));
    const untrusting = client(url, { tls: { servername: "localhost" } });
    expect(await refusal(untrusting)).toMatch(/self[- ]signed|unable to (get|verify)/i);
  });

  it(
    "persistent instance: a stream survives a restart of the server",
    () =>
      // Restarts the persistent server: alone on it, or another such test dies mid-way by luck.
      exclusive("persistent", async () => {
        const url = requireEnv("REDIS_PERSISTENT_URL");
        const stream = `smoke:stream:${randomUUID()}`;
        const before = client(url);
        await before.connect();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++)
          ids.push((await before.xadd(stream, "*", "n", String(i))) as string);
        before.disconnect();

        // A crash, not a polite shutdown: only what `appendfsync always` put on disk can survive.
        await restart("persistent", { hard: true });

        const after = client(url);
        await after.connect();
        const entries = await after.xrange(stream, "-", "+");
        expect(entries.map(([id, fields]) => [id, fields[1]])).toEqual(
          ids.map((id, i) => [id, String(i)]),
        );
        await after.del(stream);
      }),
    180_000,
  );
});
