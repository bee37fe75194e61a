import { isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  type ResolvedCluster,
  type ResolvedSentinel,
  resolveConnection,
} from "../src/client/connectionOptions.js";
import { clusterClient, nodeClient, serverClient } from "../src/client/ioredisClients.js";
import { RedisBroker } from "../src/index.js";

// How a broker is told which deployment it talks to: one server (url), a cluster or a Sentinel set;
// checked before anything connects. The cluster and Sentinel tests (test/cluster/) connect.

function refusal(work: () => unknown): Error {
  try {
    work();
  } catch (error) {
    return error as Error;
  }
  throw new Error("accepted where it should have been refused");
}

describe("the deployment a broker is given", () => {
  it("one server by url, as before", () => {
    expect(resolveConnection({ url: "rediss://u:p@cache:6390/2" })).toMatchObject({
      kind: "server",
      host: "cache",
      port: 6390,
      db: 2,
      username: "u",
      password: "p",
      tls: {},
    });
  });

  it("a cluster by its seed nodes: host:port, a scheme accepted, rediss:// for TLS", () => {
    expect(
      resolveConnection({
        cluster: { nodes: ["10.0.0.1:7000", "redis://10.0.0.2"], pubsub: "classic" },
        password: "p",
      }),
    ).toMatchObject({
      kind: "cluster",
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 6379 },
      ],
      pubsub: "classic",
      password: "p",
      tls: undefined,
    });
    expect(resolveConnection({ cluster: { nodes: ["rediss://a:7000"] } }).tls).toEqual({});
  });

  it("a Sentinel set by its sentinels (port 26379 by default) and the master's name", () => {
    expect(
      resolveConnection({
        sentinel: { sentinels: ["s1", "s2:26380"], name: "main", db: 3, password: "sp" },
        password: "mp",
      }),
    ).toMatchObject({
      kind: "sentinel",
      sentinels: [
        { host: "s1", port: 26379 },
        { host: "s2", port: 26380 },
      ],
      name: "main",
      db: 3,
      password: "mp",
      sentinelPassword: "sp",
    });
  });

  it("refuses what cannot be meant, naming the fix", () => {
    const cases: Array<[() => unknown, RegExp]> = [
      [
        () => new RedisBroker({ url: "redis://a", cluster: { nodes: ["b:1"] } }),
        /one of url \(one server\), cluster or sentinel/,
      ],
      [() => new RedisBroker({ cluster: { nodes: [] } }), /lists no address/],
      [
        () => new RedisBroker({ cluster: { nodes: ["redis://u:secret@a:1"] } }),
        /broker's username and password options/,
      ],
      [
        () => new RedisBroker({ cluster: { nodes: ["a:1"], pubsub: "both" as "classic" } }),
        /cluster.pubsub: "both"; give "sharded" or "classic"/,
      ],
      [() => new RedisBroker({ sentinel: { sentinels: ["s"], name: "" } }), /sentinel.name/],
      [
        () => new RedisBroker({ sentinel: { sentinels: ["s"], name: "m", db: -1 } }),
        /sentinel.db -1 is not a database number/,
      ],
      [() => new RedisBroker({ url: "redis+cluster://a" }), /cluster or sentinel option/],
    ];
    for (const [work, message] of cases) {
      const error = refusal(work);
      expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain("secret");
    }
  });

  it("describes a cluster and a Sentinel set before connecting, without credentials", () => {
    expect(
      new RedisBroker({ cluster: { nodes: ["a:1", "b:2"] }, password: "pw" }).describeServer(),
    ).toEqual({
      protocol: "redis",
      host: "a:1",
      description: "Redis Cluster, seed nodes a:1, b:2",
    });
    expect(
      new RedisBroker({
        sentinel: { sentinels: ["s:26379"], name: "main", password: "spw" },
        tls: true,
      }).describeServer(),
    ).toEqual({
      protocol: "rediss",
      host: "s:26379",
      description: 'Redis master "main" through Sentinel, sentinels s:26379',
    });
  });

  // The cluster and Sentinel sets of tooling/brokers run without TLS, so their tests connect with a
  // password and an ACL user only; TLS is checked here as far as this package takes it: into the
  // options of every ioredis client it builds (none of them connects: they are lazy).
  it("hands TLS, the password and the ACL user to every client of a cluster and of a Sentinel set", () => {
    const ca = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
    const sentinelCa = "-----BEGIN CERTIFICATE-----\nSENTINEL CA\n-----END CERTIFICATE-----\n";
    const tls = { ca: new TextEncoder().encode(ca), servername: "redis.internal", verify: false };
    // As node:tls names them, the PEM bytes read as text.
    const nodeTls = { ca: [ca], servername: "redis.internal", rejectUnauthorized: false };
    const cluster = resolveConnection({
      cluster: { nodes: ["a:1"] },
      username: "app",
      password: "pw",
      tls,
    }) as ResolvedCluster;
    const main = clusterClient(cluster);
    expect(main.options.redisOptions).toMatchObject({
      username: "app",
      password: "pw",
      tls: nodeTls,
    });
    const node = nodeClient(cluster, { host: "b", port: 2 }, "reader");
    expect(node.options).toMatchObject({
      host: "b",
      port: 2,
      username: "app",
      password: "pw",
      tls: nodeTls,
    });
    const sentinel = resolveConnection({
      sentinel: {
        sentinels: ["s:26379"],
        name: "main",
        username: "watcher",
        password: "spw",
        tls: { ca: sentinelCa },
      },
      username: "app",
      password: "pw",
      tls,
    }) as ResolvedSentinel;
    const behind = serverClient(sentinel, "main");
    expect(behind.options).toMatchObject({
      name: "main",
      username: "app",
      password: "pw",
      tls: nodeTls,
      enableTLSForSentinelMode: true,
      sentinelUsername: "watcher",
      sentinelPassword: "spw",
      sentinelTLS: { ca: [sentinelCa] },
    });
    for (const client of [main, node, behind]) client.disconnect();
  });
});
