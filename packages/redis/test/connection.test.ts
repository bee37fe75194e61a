import { readFileSync } from "node:fs";
import { isRustStreamError } from "@ruststream/core";
import { brokers, bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { RedisBroker, RedisList, RedisStream } from "../src/index.js";

async function refusal(broker: RedisBroker): Promise<unknown> {
  try {
    const connected = await broker.connect();
    await connected.shutdown();
  } catch (error) {
    return error;
  }
  throw new Error("the server accepted a client it should have refused");
}

async function roundTrip(broker: RedisBroker): Promise<string> {
  const connected = await broker.connect();
  try {
    const key = uniqueName("auth");
    const sub = await connected.subscribe(new RedisStream(key, { group: "g" }));
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: key, payload: bytes("hello") });
    const next = await sub.next();
    if (next.done) throw new Error("ended");
    await next.value.ack();
    return text(next.value.payload);
  } finally {
    await connected.shutdown();
  }
}

describe("password, ACL user and TLS", () => {
  it("connects with the password, and with the ACL user", async () => {
    expect(await roundTrip(new RedisBroker({ url: requireEnv("REDIS_PASSWORD_URL") }))).toBe(
      "hello",
    );
    expect(await roundTrip(new RedisBroker({ url: requireEnv("REDIS_ACL_URL") }))).toBe("hello");
  });

  it("a wrong password is refused with an error that says what to check", async () => {
    const url = new URL(requireEnv("REDIS_PASSWORD_URL"));
    url.password = "wrong";
    const error = await refusal(new RedisBroker({ url: url.toString() }));
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect((error as Error).message).toMatch(/refused the password.*check the password/);
    expect((error as Error).message).not.toContain("wrong");
  });

  it("no password on a protected server says a password is required", async () => {
    const url = new URL(requireEnv("REDIS_PASSWORD_URL"));
    url.password = "";
    const error = await refusal(new RedisBroker({ url: url.toString() }));
    expect((error as Error).message).toMatch(/requires a password/);
  });

  it("a wrong ACL user password names the user", async () => {
    const url = new URL(requireEnv("REDIS_ACL_URL"));
    url.password = "nope";
    const error = await refusal(new RedisBroker({ url: url.toString() }));
    expect((error as Error).message).toMatch(/refused user "ruststream"/);
  });

  it("an ACL user that may not run scripts gets an error naming the grant a reliable list needs", async () => {
    const admin = new Redis(requireEnv("REDIS_PASSWORD_URL"), { protocol: 2 });
    const user = `noscripts-${process.pid}`;
    await admin.call("ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all", "-@scripting");
    const url = new URL(requireEnv("REDIS_PASSWORD_URL"));
    url.username = user;
    url.password = "secret";
    const connected = await new RedisBroker({ url: url.toString() }).connect();
    try {
      const key = uniqueName("noscripts");
      await admin.lpush(key, "a value");
      const sub = await connected.subscribe(new RedisList(key));
      const error = await sub.next().then(
        () => new Error("the read succeeded without scripting"),
        (reason: unknown) => reason,
      );
      expect(isRustStreamError(error, "broker-failure")).toBe(true);
      expect((error as Error).message).toMatch(/NOPERM.*the ACL user needs \+@scripting/);
      // Nothing moved: the value waits in the queue for a consumer that may read it.
      expect(await admin.llen(key)).toBe(1);
      expect(await admin.llen(`${key}.processing`)).toBe(0);
    } finally {
      await connected.shutdown();
      await admin.call("ACL", "DELUSER", user);
      admin.disconnect();
    }
  });

  it("TLS with the server's CA works", async () => {
    const ca = readFileSync(requireEnv("REDIS_TLS_CA"));
    const broker = new RedisBroker({
      url: requireEnv("REDIS_TLS_URL"),
      tls: { ca, servername: "localhost" },
    });
    expect(await roundTrip(broker)).toBe("hello");
    const connected = await broker.connect();
    expect(connected.describeServer()).toMatchObject({ protocol: "rediss" });
    await connected.shutdown();
  });

  it("TLS without the right CA is refused with an error that names the fix", async () => {
    const error = await refusal(
      new RedisBroker({ url: requireEnv("REDIS_TLS_URL"), connectTimeoutMs: 3000 }),
    );
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect((error as Error).message).toMatch(/not signed by a CA this client trusts.*tls\.ca/);
  });

  it("nothing listening says so", async () => {
    const error = await refusal(new RedisBroker({ url: "redis://127.0.0.1:1" }));
    expect((error as Error).message).toMatch(/nothing accepts connections at 127\.0\.0\.1:1/);
  });
});

describe("a server restart", () => {
  it(
    "the persistent server restarted mid-stream: the broker reconnects, nothing lost, nothing acked comes back",
    () =>
      // Restarts the persistent server: alone on it, or another such test dies mid-way by luck.
      brokers.redis.exclusive("persistent", async () => {
        const broker = await new RedisBroker({ url: requireEnv("REDIS_PERSISTENT_URL") }).connect();
        const key = uniqueName("restart");
        const sub = await broker.subscribe(new RedisStream(key, { group: "g", blockMs: 500 }));
        const publisher = await broker.defaultPublishPolicy().pair(broker);
        const seen: string[] = [];
        for (let i = 0; i < 20; i++)
          await publisher.publish({ name: key, payload: bytes(`m${i}`) });
        for (let i = 0; i < 10; i++) {
          const next = await sub.next();
          if (next.done) throw new Error("ended");
          seen.push(text(next.value.payload));
          await next.value.ack();
        }
        await brokers.redis.restart("persistent", { hard: true });
        for (let i = 20; i < 30; i++)
          await publisher.publish({ name: key, payload: bytes(`m${i}`) });
        while (seen.length < 30) {
          const next = await sub.next();
          if (next.done) throw new Error("ended");
          seen.push(text(next.value.payload));
          await next.value.ack();
        }
        // Read but unacked before the crash would come back; acked ones never do.
        expect(new Set(seen).size).toBe(30);
        expect(seen.slice(0, 10)).toEqual([...Array(10).keys()].map((i) => `m${i}`));
        await broker.shutdown();
      }),
    180_000,
  );
});
