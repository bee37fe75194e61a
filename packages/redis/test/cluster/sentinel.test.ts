import { isRustStreamError } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { type ConnectedRedisBroker, RedisBroker, RedisStream } from "../../src/index.js";
import { swallowedEntryRecovered } from "./cutReader.js";
import { sentinelOptions } from "./env.js";

// What Sentinel changes: the master is found through the sentinels, a cut connection goes back to
// them, and the first connection's errors say whether the sentinels or the master refused.

const sentinels = () => requireEnv("REDIS_SENTINELS").split(",");
const name = () => requireEnv("REDIS_SENTINEL_NAME");

/** A plain connection to the master the sentinels name. */
function master(): Redis {
  const client = new Redis({
    sentinels: sentinels().map((s) => {
      const [host, port] = s.split(":");
      return { host: host ?? "127.0.0.1", port: Number(port) };
    }),
    name: name(),
    password: requireEnv("REDIS_SENTINEL_PASSWORD"),
    protocol: 2,
  });
  client.on("error", () => {});
  return client;
}

const inspector = master();
afterAll(() => inspector.disconnect());

async function failure(work: () => Promise<unknown>): Promise<Error> {
  try {
    await work();
  } catch (error) {
    return error as Error;
  }
  throw new Error("it succeeded where it should have been refused");
}

describe("a master behind Sentinel", () => {
  it("the blocked reader's connection killed: what the cut swallowed is delivered", () =>
    swallowedEntryRecovered(sentinelOptions(), {
      data: inspector,
      node: async () => master(),
    }));

  it("the ACL user connects; the description names the sentinels and carries no password", async () => {
    const aclPassword = requireEnv("REDIS_SENTINEL_ACL_PASSWORD");
    const broker = new RedisBroker({
      sentinel: { sentinels: sentinels(), name: name() },
      username: requireEnv("REDIS_SENTINEL_ACL_USER"),
      password: aclPassword,
    });
    const connected: ConnectedRedisBroker = await broker.connect();
    try {
      const key = uniqueName("acl");
      const sub = await connected.subscribe(new RedisStream(key, { group: "g" }));
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.publish({ name: key, payload: bytes("through the sentinels") });
      const got = await sub.next();
      if (got.done) throw new Error("ended");
      expect(text(got.value.payload)).toBe("through the sentinels");
      await got.value.ack();
      expect(JSON.stringify([broker.describeServer(), connected.describeServer()])).not.toContain(
        aclPassword,
      );
      expect(connected.describeServer()).toMatchObject({
        host: sentinels()[0],
        description: expect.stringMatching(
          /^Redis master "ruststream" through Sentinel, sentinels /,
        ),
      });
    } finally {
      await connected.shutdown();
    }
  });

  it("a master name the sentinels do not know is refused with the fix", async () => {
    const error = await failure(() =>
      new RedisBroker({
        sentinel: { sentinels: sentinels(), name: "nobody" },
        password: requireEnv("REDIS_SENTINEL_PASSWORD"),
      }).connect(),
    );
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(error.message).toMatch(
      /no sentinel at .* monitors a master named "nobody".*sentinel\.name/,
    );
  });

  it("a wrong password for the master is refused with what to check", async () => {
    const error = await failure(() =>
      new RedisBroker({ ...sentinelOptions(), password: "wrong" }).connect(),
    );
    expect(error.message).toMatch(/master "ruststream" .* refused the password.*password option/);
    expect(error.message).not.toContain("wrong");
  });

  it("no sentinel answering says so", async () => {
    const error = await failure(() =>
      new RedisBroker({ sentinel: { sentinels: ["127.0.0.1:1"], name: name() } }).connect(),
    );
    expect(error.message).toMatch(/no sentinel answers at 127\.0\.0\.1:1.*sentinel\.sentinels/);
  });
});
