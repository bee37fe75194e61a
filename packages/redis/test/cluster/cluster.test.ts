import { isRustStreamError, systemClock } from "@ruststream/core";
import { CountingCoordinator, reportsBacklog } from "@ruststream/core/broker";
import { brokers, bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import {
  type ConnectedRedisBroker,
  RedisBroker,
  type RedisBrokerOptions,
  RedisList,
  RedisPublish,
  RedisPubSub,
  RedisPubSubPattern,
  RedisStream,
} from "../../src/index.js";
import { eventually } from "../appSupport.js";
import { swallowedEntryRecovered } from "./cutReader.js";
import { clusterNodes, clusterOptions, inspectCluster, inspectNode } from "./env.js";

// What a cluster changes, on the six-node cluster (and, where the in-process stand-in of a broker
// configured for a cluster should answer the same, beside it): transactions across slots, derived
// keys in their key's slot, sharded and classic Pub/Sub, a cut of a blocked reader, credentials.

const cluster = brokers["redis-cluster"];
const inspector = inspectCluster();
afterAll(() => inspector.disconnect());

async function withConnection<T>(
  options: RedisBrokerOptions,
  work: (connected: ConnectedRedisBroker) => Promise<T>,
): Promise<T> {
  const connected = await new RedisBroker(options).connect();
  try {
    return await work(connected);
  } finally {
    await connected.shutdown();
  }
}

/** The in-process stand-in of a broker configured for this cluster (it never connects to it). */
function inProcessCluster(): Promise<ConnectedRedisBroker> {
  return new RedisBroker(clusterOptions()).connectInProcess({
    coordinator: new CountingCoordinator(),
    clock: systemClock,
  });
}

async function failure(work: () => Promise<unknown>): Promise<Error> {
  try {
    await work();
  } catch (error) {
    return error as Error;
  }
  throw new Error("it succeeded where it should have been refused");
}

describe("transactions on a cluster", () => {
  it("a transaction across slots is refused before anything is sent, the same on the cluster and in-process", async () => {
    const a = uniqueName("tx-a");
    const b = uniqueName("tx-b");
    const across = (connected: ConnectedRedisBroker) =>
      failure(async () => {
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        await publisher.transaction(async (tx) => {
          await tx.publish({ name: a, payload: bytes("1") });
          await tx.publish({ name: b, payload: bytes("2") });
        });
      });
    const onCluster = await withConnection(clusterOptions(), across);
    const inProcess = await inProcessCluster();
    const standIn = await across(inProcess);
    await inProcess.shutdown();
    expect(isRustStreamError(onCluster, "unsupported")).toBe(true);
    expect(onCluster.message).toMatch(/different slots: .*\(slot \d+\).*one hash tag/);
    expect(standIn.message).toBe(onCluster.message);
    // Nothing was sent: neither stream exists.
    expect([await inspector.exists(a), await inspector.exists(b)]).toEqual([0, 0]);
  });

  it("keys sharing a hash tag commit together", async () => {
    const tag = uniqueName("tagged");
    const names = [`{${tag}}.created`, `{${tag}}.billed`];
    await withConnection(clusterOptions(), async (connected) => {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.transaction(async (tx) => {
        for (const name of names) await tx.publish({ name, payload: bytes(name) });
      });
    });
    for (const name of names) expect(await inspector.xlen(name), name).toBe(1);
  });
});

describe("keys a descriptor derives", () => {
  it("a stream's delayed retry parks in {key}.delayed, in the stream's slot, and comes back", async () => {
    const key = uniqueName("delayed");
    await withConnection(clusterOptions(), async (connected) => {
      const sub = await connected.subscribe(new RedisStream(key, { group: "g", blockMs: 200 }));
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.publish({ name: key, payload: bytes("later") });
      const first = await sub.next();
      if (first.done) throw new Error("ended");
      expect(await first.value.nackAfter(300)).toBe("ok");
      expect(await inspector.zcard(`{${key}}.delayed`)).toBe(1);
      expect(await cluster.slotOf(`{${key}}.delayed`)).toBe(await cluster.slotOf(key));
      const again = await sub.next();
      if (again.done) throw new Error("ended");
      expect(text(again.value.payload)).toBe("later");
      expect(again.value.headers.getString("x-ruststream-retry-count")).toBe("1");
      await again.value.ack();
    });
  });

  it("a dead letter in another slot is written before the original is acked, one after the other", async () => {
    const key = uniqueName("capped");
    const dlq = uniqueName("dead");
    expect(await cluster.slotOf(dlq)).not.toBe(await cluster.slotOf(key));
    await withConnection(clusterOptions(), async (connected) => {
      const sub = await connected.subscribe(
        new RedisStream(key, { group: "g", retry: { maxAttempts: 1, deadLetter: dlq } }),
      );
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.publish({ name: key, payload: bytes("poison") });
      const got = await sub.next();
      if (got.done) throw new Error("ended");
      expect(await got.value.nack({ requeue: true })).toBe("ok");
    });
    const [[, fields]] = (await inspector.xrange(dlq, "-", "+")) as [[string, string[]]];
    expect(fields[fields.indexOf("_payload") + 1]).toBe("poison");
    expect(Number(((await inspector.xpending(key, "g")) as unknown[])[0])).toBe(0);
  });

  it("a reliable list whose keys were given in other slots is refused at subscribe, the same in-process", async () => {
    const key = uniqueName("apart");
    const list = new RedisList(key, { processing: `${key}.elsewhere` });
    const subscribe = (connected: ConnectedRedisBroker) => failure(() => connected.subscribe(list));
    const onCluster = await withConnection(clusterOptions(), subscribe);
    const inProcess = await inProcessCluster();
    const standIn = await subscribe(inProcess);
    await inProcess.shutdown();
    expect(isRustStreamError(onCluster, "invalid-argument")).toBe(true);
    expect(onCluster.message).toMatch(
      /must share a hash slot.*Leave processing and recoveryKey out/,
    );
    expect(standIn.message).toBe(onCluster.message);
  });
});

describe("a stream's backlog on a cluster", () => {
  it("its derived delayed set is read in the stream's MULTI, a set in another slot beside it; the same in-process", async () => {
    const key = uniqueName("backlog");
    const apartStream = `${key}-apart`;
    const apartSet = uniqueName("parked");
    // A transaction across these two would be refused (CROSSSLOT): the backlog must not send one.
    expect(await cluster.slotOf(apartSet)).not.toBe(await cluster.slotOf(apartStream));
    const sources = [
      new RedisStream(key, { group: "g", start: "beginning" }),
      new RedisStream(apartStream, {
        group: "g",
        start: "beginning",
        delayedRetry: { key: apartSet },
      }),
    ];
    const scenario = async (connected: ConnectedRedisBroker) => {
      const counts: unknown[] = [];
      for (const source of sources) {
        const sub = await connected.subscribe(source);
        try {
          for (let i = 0; i < 2; i++) await connected.link.call("XADD", [source.name, "*", "n", i]);
          const [first] = await sub.nextBatch(2);
          // Parked for a minute: one leased, one scheduled.
          expect(await first?.nackAfter(60_000)).toBe("ok");
          counts.push(reportsBacklog(sub) ? await sub.backlog() : "no backlog");
        } finally {
          await sub.close();
        }
      }
      return counts;
    };
    const onCluster = await withConnection(clusterOptions(), scenario);
    const inProcess = await inProcessCluster();
    const standIn = await scenario(inProcess).finally(() => inProcess.shutdown());
    const expected = { ready: 0, leased: 1, scheduled: 1 };
    expect(onCluster).toEqual([expected, expected]);
    expect(standIn).toEqual(onCluster);
  });
});

describe("Pub/Sub on a cluster", () => {
  it("sharded by default: SPUBLISH reaches the subscriber on its channel's node, and a pattern is refused with the fix", async () => {
    const channel = uniqueName("news");
    await withConnection(clusterOptions(), async (connected) => {
      expect(connected.link.cluster).toEqual({ pubsub: "sharded" });
      const sub = await connected.subscribe(new RedisPubSub(channel));
      const node = inspectNode(await cluster.masterOf(channel));
      const [, subscribers] = (await node.call("PUBSUB", "SHARDNUMSUB", channel)) as [
        string,
        number,
      ];
      node.disconnect();
      expect(subscribers, "subscribed on the node serving the channel").toBe(1);
      const publisher = await new RedisPublish({ transport: "pubsub" }).pair(connected);
      await publisher.publish({ name: channel, payload: bytes("sharded") });
      const got = await sub.next();
      if (got.done) throw new Error("ended");
      expect(text(got.value.payload)).toBe("sharded");
      const refused = await failure(() =>
        connected.subscribe(new RedisPubSubPattern(`${channel}.*`)),
      );
      expect(isRustStreamError(refused, "unsupported")).toBe(true);
      expect(refused.message).toMatch(/set cluster.pubsub to "classic"/);
    });
  });

  it("classic when asked: patterns work, and a message reaches a subscriber on any node", async () => {
    const channel = uniqueName("classic");
    const options = { ...clusterOptions(), cluster: { nodes: clusterNodes(), pubsub: "classic" } };
    await withConnection(options as RedisBrokerOptions, async (connected) => {
      expect(connected.link.cluster).toEqual({ pubsub: "classic" });
      const named = await connected.subscribe(new RedisPubSub(channel));
      const pattern = await connected.subscribe(new RedisPubSubPattern(`${channel}*`));
      const publisher = await new RedisPublish({ transport: "pubsub" }).pair(connected);
      await publisher.publish({ name: channel, payload: bytes("classic") });
      for (const sub of [named, pattern]) {
        const got = await sub.next();
        if (got.done) throw new Error("ended");
        expect(text(got.value.payload)).toBe("classic");
      }
    });
  });
});

describe("a cut on a cluster", () => {
  it("the blocked reader's connection killed on its node: what the cut swallowed is delivered", () =>
    swallowedEntryRecovered(clusterOptions(), {
      data: inspector,
      node: async (key) => inspectNode(await cluster.masterOf(key)),
    }));
});

describe("credentials on a cluster", () => {
  it("the password and the ACL user connect; the description carries neither", async () => {
    const password = requireEnv("REDIS_CLUSTER_PASSWORD");
    const aclPassword = requireEnv("REDIS_CLUSTER_ACL_PASSWORD");
    const broker = new RedisBroker({
      cluster: { nodes: clusterNodes() },
      username: requireEnv("REDIS_CLUSTER_ACL_USER"),
      password: aclPassword,
    });
    await withConnection(
      {
        cluster: { nodes: clusterNodes() },
        username: requireEnv("REDIS_CLUSTER_ACL_USER"),
        password: aclPassword,
      },
      async (connected) => {
        const key = uniqueName("acl");
        const sub = await connected.subscribe(new RedisStream(key, { group: "g" }));
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        await publisher.publish({ name: key, payload: bytes("as the ACL user") });
        const got = await sub.next();
        if (got.done) throw new Error("ended");
        expect(text(got.value.payload)).toBe("as the ACL user");
        await got.value.ack();
        const described = JSON.stringify([broker.describeServer(), connected.describeServer()]);
        expect(described).not.toContain(aclPassword);
        expect(described).not.toContain(password);
        expect(connected.describeServer()).toMatchObject({
          protocol: "redis",
          host: clusterNodes()[0],
          description: expect.stringMatching(/^Redis Cluster, seed nodes /),
        });
      },
    );
  });

  it("a wrong password, or none, is refused with what to check", async () => {
    const wrong = await failure(() =>
      new RedisBroker({ cluster: { nodes: clusterNodes() }, password: "wrong" }).connect(),
    );
    expect(isRustStreamError(wrong, "broker-failure")).toBe(true);
    expect(wrong.message).toMatch(/Redis Cluster at .* refused the password.*password option/);
    expect(wrong.message).not.toContain("wrong");
    const none = await failure(() =>
      new RedisBroker({ cluster: { nodes: clusterNodes() } }).connect(),
    );
    expect(none.message).toMatch(/requires a password.*password option/);
  });

  it("no seed answering says so", async () => {
    const error = await failure(() =>
      new RedisBroker({ cluster: { nodes: ["127.0.0.1:1"] }, connectTimeoutMs: 3000 }).connect(),
    );
    expect(error.message).toMatch(
      /nothing accepts connections at 127\.0\.0\.1:1 .*fix cluster.nodes/,
    );
  });
});

describe("the cluster's own view", () => {
  it("the broker's hash slots are the cluster's", async () => {
    const { hashSlot } = await import("../../src/client/slots.js");
    for (const key of ["foo", "{tag}.x", uniqueName("any"), "ünïcode", "a{b"]) {
      expect(hashSlot(key), key).toBe(await cluster.slotOf(key));
    }
  });

  it("a blocked reader waits on the master serving its key", async () => {
    const key = uniqueName("where");
    await withConnection(clusterOptions(), async (connected) => {
      const sub = await connected.subscribe(new RedisStream(key, { group: "g", blockMs: 2000 }));
      const pulling = sub.next();
      const node = inspectNode(await cluster.masterOf(key));
      await eventually("the reader blocked on the key's master", async () =>
        ((await node.client("LIST")) as string)
          .split("\n")
          .some(
            (line) => line.includes("name=ruststream-reader") && line.includes("cmd=xreadgroup"),
          ),
      );
      node.disconnect();
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.publish({ name: key, payload: bytes("here") });
      const got = await pulling;
      if (got.done) throw new Error("ended");
      expect(text(got.value.payload)).toBe("here");
      await got.value.ack();
    });
  });

  it("closing a subscription wakes its read blocked on the key's master at once", async () => {
    const key = uniqueName("wake");
    await withConnection(clusterOptions(), async (connected) => {
      const sub = await connected.subscribe(new RedisStream(key, { group: "g", blockMs: 30_000 }));
      const pulling = sub.next();
      const node = inspectNode(await cluster.masterOf(key));
      await eventually("the read blocked on the key's master", async () =>
        ((await node.client("LIST")) as string)
          .split("\n")
          .some(
            (line) => line.includes("name=ruststream-reader") && line.includes("cmd=xreadgroup"),
          ),
      );
      node.disconnect();
      const began = Date.now();
      await sub.close();
      // CLIENT UNBLOCK, sent to the node the read waits on: not the read's own 30 s.
      expect(Date.now() - began).toBeLessThan(3000);
      expect((await pulling).done).toBe(true);
    });
  });
});
