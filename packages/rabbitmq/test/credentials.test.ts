import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRustStreamError, RustStream, type TlsOptions } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { brokers, ensureTestCertificates, requireEnv } from "@ruststream/tooling-testkit/brokers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectedRabbitBroker,
  RabbitBroker,
  type RabbitBrokerOptions,
  RabbitQueue,
} from "../src/index.js";
import { TlsEndingRelay } from "./tlsEndingRelay.js";

// Credentials beyond the user and password of vhost "/": a vhost of its own named in the url's
// path, percent-encoded, and a TLS client certificate logging in by the EXTERNAL mechanism as the
// user its common name names. Each test run makes its vhosts and users through the management API
// (the certificate through tooling/brokers' CA) and removes them at its end.

const { management, clientCertificate } = brokers.rabbitmq;
const id = randomUUID().slice(0, 8);
/** A vhost with a "/" and a space in it, both percent-encoded in the url. */
const vhost = `creds/${id} eu`;
/** A vhost the password user has no permissions on. */
const foreignVhost = `creds-foreign-${id}`;
const user = `creds-vhost-${id}`;
/** Not ASCII, and with the characters a url reserves: percent-encoded in the url, decoded as UTF-8. */
const password = `pä€ss:@/ ${randomUUID()}`;
/** The certificate's common name, and the user of that name (no password). */
const certUser = `creds-cert-${id}`;
/** A certificate whose common name names no user. */
const strangerName = `creds-stranger-${id}`;
const files: string[] = [];

const path = (name: string) => encodeURIComponent(name);
const put = (at: string, body: unknown) =>
  management(at, { method: "PUT", body: JSON.stringify(body) });
const everything = { configure: ".*", write: ".*", read: ".*" };

beforeAll(async () => {
  await put(`/api/vhosts/${path(vhost)}`, {});
  await put(`/api/vhosts/${path(foreignVhost)}`, {});
  await put(`/api/users/${path(user)}`, { password, tags: "" });
  await put(`/api/permissions/${path(vhost)}/${path(user)}`, everything);
  // An empty password hash: the user cannot log in by password, only by certificate.
  await put(`/api/users/${path(certUser)}`, { password_hash: "", tags: "" });
  await put(`/api/permissions/${path(vhost)}/${path(certUser)}`, everything);
});

const open: ConnectedRabbitBroker[] = [];
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.shutdown()));
  for (const name of [vhost, foreignVhost])
    await management(`/api/vhosts/${path(name)}`, { method: "DELETE" });
  for (const name of [user, certUser])
    await management(`/api/users/${path(name)}`, { method: "DELETE" });
  for (const file of files) rmSync(file, { force: true, recursive: true });
});

/** The node's AMQP url with the user, the password and the vhost, each percent-encoded. */
function plainUrl(name: string, secret: string, vhostName: string): string {
  const node = new URL(requireEnv("RABBITMQ_URL"));
  return `amqp://${path(name)}:${path(secret)}@${node.host}/${path(vhostName)}`;
}

/** The node's TLS listener's url, no user or password: the certificate says who. */
function tlsUrl(vhostPath: string): string {
  return `amqps://${new URL(requireEnv("RABBITMQ_TLS_URL")).host}/${vhostPath}`;
}

async function certificateOptions(commonName: string): Promise<TlsOptions> {
  const made = await clientCertificate(commonName);
  files.push(made.cert, made.key);
  return {
    ca: readFileSync(requireEnv("RABBITMQ_TLS_CA")),
    cert: readFileSync(made.cert),
    key: readFileSync(made.key),
  };
}

async function connect(options: RabbitBrokerOptions): Promise<ConnectedRabbitBroker> {
  const connected = await new RabbitBroker({ declare: true, ...options }).connect();
  open.push(connected);
  return connected;
}

/** Publishes one message to a new queue and reads it back: the connection works in its vhost. */
async function roundTrip(connected: ConnectedRabbitBroker, queue: string): Promise<string> {
  const subscription = await connected.subscribe(new RabbitQueue(queue));
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: queue, payload: new TextEncoder().encode(`to ${queue}`) });
  const delivery = (await subscription.next()).value;
  await delivery?.ack();
  await subscription.close();
  return new TextDecoder().decode(delivery?.payload);
}

interface ManagedConnection {
  readonly name: string;
  readonly user: string;
  readonly vhost: string;
  readonly auth_mechanism: string;
}

/**
 * The node's connections of `name` in `vhostName`, once it lists at least one (it lists a new one
 * soon after). The vhost too: a connection an earlier test left open may be the user's elsewhere.
 */
async function connectionsOf(name: string, vhostName: string): Promise<ManagedConnection[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const all = (await management("/api/connections")) as ManagedConnection[];
    const mine = all.filter((c) => c.user === name && c.vhost === vhostName);
    if (mine.length > 0 || Date.now() > deadline) return mine;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("a vhost other than / (real node)", () => {
  it("the url's path names it, percent-encoded (a password not ASCII decoded as UTF-8): the queue is made and read there, not in /", async () => {
    const connected = await connect({ url: plainUrl(user, password, vhost) });
    const queue = `creds-q-${id}`;
    expect(await roundTrip(connected, queue)).toBe(`to ${queue}`);
    const there = (await management(`/api/queues/${path(vhost)}/${queue}`)) as { vhost: string };
    expect(there.vhost).toBe(vhost);
    const inDefault = await management(`/api/queues/%2F/${queue}`).catch((e: Error) => e.message);
    expect(inDefault).toMatch(/404/);
  });

  it("a vhost the user may not use is refused at connect, naming the vhost, the user and the fix", async () => {
    const refused = await connect({
      url: plainUrl(user, password, foreignVhost),
    }).catch((e: unknown) => e);
    expect(isRustStreamError(refused, "broker-failure")).toBe(true);
    const message = (refused as Error).message;
    expect(message).toContain(`RabbitMQ refused user "${user}" the vhost "${foreignVhost}"`);
    expect(message).toContain(`rabbitmqctl set_permissions -p '${foreignVhost}' '${user}'`);
    expect(message).not.toContain(password);
  });

  it("a vhost that does not exist is refused the same way, naming it", async () => {
    const missing = `creds-missing-${id}`;
    const refused = await connect({
      url: plainUrl(user, password, missing),
    }).catch((e: unknown) => e);
    expect(isRustStreamError(refused, "broker-failure")).toBe(true);
    expect((refused as Error).message).toContain(`the vhost "${missing}": it does not exist`);
    expect((refused as Error).message).toContain(`rabbitmqctl add_vhost '${missing}'`);
  });

  it("permissions taken away while connected: the reconnect is refused, the state lost naming the vhost", async () => {
    const revoked = `creds-revoked-${id}`;
    await put(`/api/vhosts/${path(revoked)}`, {});
    try {
      await put(`/api/permissions/${path(revoked)}/${path(user)}`, everything);
      const states: string[] = [];
      const reasons: string[] = [];
      const connected = await new RabbitBroker({
        url: plainUrl(user, password, revoked),
        reconnect: { initialMs: 50, maxMs: 200 },
      }).connect({
        onState: (change) => {
          states.push(change.state);
          if (change.reason !== undefined) reasons.push(change.reason);
        },
      });
      open.push(connected);
      await management(`/api/permissions/${path(revoked)}/${path(user)}`, { method: "DELETE" });
      const revokedConnections = await connectionsOf(user, revoked);
      expect(revokedConnections).not.toEqual([]);
      for (const c of revokedConnections)
        await management(`/api/connections/${path(c.name)}`, { method: "DELETE" });
      const deadline = Date.now() + 15_000;
      while (!states.includes("lost") && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(states).toContain("lost");
      expect(reasons.at(-1)).toContain(`RabbitMQ refused user "${user}" the vhost "${revoked}"`);
    } finally {
      await management(`/api/vhosts/${path(revoked)}`, { method: "DELETE" });
    }
  });

  it("a wrong password is refused naming the user, never the password", async () => {
    const wrong = `wrong-${randomUUID()}`;
    const refused = await connect({ url: plainUrl(user, wrong, vhost) }).catch((e: unknown) => e);
    expect(isRustStreamError(refused, "broker-failure")).toBe(true);
    expect((refused as Error).message).toContain(`RabbitMQ refused the login of user "${user}"`);
    expect((refused as Error).message).not.toContain(wrong);
  });
});

describe("a TLS client certificate, the EXTERNAL mechanism (real node)", () => {
  it("logs in as the user the certificate's common name names, in its vhost", async () => {
    const connected = await connect({
      url: tlsUrl(path(vhost)),
      tls: await certificateOptions(certUser),
      authMechanism: "EXTERNAL",
    });
    const queue = `creds-cert-q-${id}`;
    expect(await roundTrip(connected, queue)).toBe(`to ${queue}`);
    const [seen] = await connectionsOf(certUser, vhost);
    expect(seen).toMatchObject({ user: certUser, vhost, auth_mechanism: "EXTERNAL" });
  });

  it("a certificate whose name no user has is refused, naming what the node needs", async () => {
    const refused = await connect({
      url: tlsUrl(path(vhost)),
      tls: await certificateOptions(strangerName),
      authMechanism: "EXTERNAL",
    }).catch((e: unknown) => e);
    expect(isRustStreamError(refused, "broker-failure")).toBe(true);
    expect((refused as Error).message).toContain(
      "RabbitMQ refused the login by client certificate",
    );
    expect((refused as Error).message).toContain("ssl_cert_login_from");
  });
});

describe("EXTERNAL where the node cannot take the certificate (real node)", () => {
  /** The node's TLS port, its plain port and the CA of its certificate. */
  const node = () => ({
    plain: Number(new URL(requireEnv("RABBITMQ_URL")).port),
    tls: Number(new URL(requireEnv("RABBITMQ_TLS_URL")).port),
    ca: readFileSync(requireEnv("RABBITMQ_TLS_CA")),
  });

  /** A CA of the test's own, not the node's, and a certificate it signed for 127.0.0.1. */
  async function foreignCertificates(): Promise<{ ca: Buffer; cert: Buffer; key: Buffer }> {
    const dir = mkdtempSync(join(tmpdir(), "rs-rabbit-creds-"));
    files.push(dir);
    const made = await ensureTestCertificates(dir, "ruststream credentials test foreign CA");
    return {
      ca: readFileSync(made.ca),
      cert: readFileSync(made.cert),
      key: readFileSync(made.key),
    };
  }

  /** A relay ending the client's TLS in front of the node (its own CA); stopped after `run`. */
  async function throughRelay(
    upstream: ConstructorParameters<typeof TlsEndingRelay>[1],
    run: (port: number, relayCa: Buffer) => Promise<void>,
  ): Promise<void> {
    const own = await foreignCertificates();
    const relay = new TlsEndingRelay(own, upstream);
    await relay.start();
    try {
      await run(relay.port, own.ca);
    } finally {
      await relay.stop();
    }
  }

  /**
   * EXTERNAL to 127.0.0.1:`port`, refused: with a certificate the node would take (its user
   * exists, its CA the node's), or the one given; trusting the node's CA, or the one given.
   */
  async function refusalAt(port: number, tls: Partial<TlsOptions> = {}): Promise<Error> {
    const refused = await connect({
      url: `amqps://127.0.0.1:${port}/${path(vhost)}`,
      tls: { ...(await certificateOptions(certUser)), ...tls },
      authMechanism: "EXTERNAL",
      // Longer than the test's own limit: a refusal that waited for it would fail the test.
      connectTimeoutMs: 120_000,
    }).catch((e: unknown) => e);
    expect(isRustStreamError(refused, "broker-failure")).toBe(true);
    return refused as Error;
  }

  it("the node's plain listener: it does not answer TLS, refused at once naming its TLS listener", async () => {
    const { message } = await refusalAt(node().plain);
    expect(message).toContain("did not answer in TLS (ERR_SSL_WRONG_VERSION_NUMBER)");
    expect(message).toContain("connect to the node's TLS listener");
    expect(message).toContain("EXTERNAL logs in only over TLS");
  });

  it("a proxy ending TLS, plain to the node: the node does not offer EXTERNAL, refused naming why", async () => {
    await throughRelay({ port: node().plain }, async (port, ca) => {
      const { message } = await refusalAt(port, { ca });
      expect(message).toContain("RabbitMQ does not offer the EXTERNAL mechanism");
      expect(message).toContain("only on a TLS connection it ends itself");
      expect(message).toContain("rabbitmq_auth_mechanism_ssl");
    });
  });

  it("a proxy ending TLS, TLS of its own to the node without the certificate: the login refused naming why", async () => {
    await throughRelay({ port: node().tls, tls: { ca: node().ca } }, async (port, ca) => {
      const { message } = await refusalAt(port, { ca });
      expect(message).toContain("RabbitMQ refused the login by client certificate");
      expect(message).toContain("the certificate must reach the node");
    });
  });

  it("a certificate of a CA the node does not trust: refused in the TLS handshake, naming the node's CA file", async () => {
    const { cert, key } = await foreignCertificates();
    const { message } = await refusalAt(node().tls, { cert, key });
    expect(message).toContain("RabbitMQ refused the client certificate in the TLS handshake");
    expect(message).toContain("ssl_options.cacertfile");
  });
});

/** PEM-shaped text: what the options check, never parsed before a connect. */
const pem = (label: string) => `-----BEGIN ${label}-----\nAA==\n-----END ${label}-----\n`;
const fakeTls = { ca: pem("CERTIFICATE"), cert: pem("CERTIFICATE"), key: pem("PRIVATE KEY") };

describe("the options, checked where the broker is built", () => {
  const tls = fakeTls;

  it("EXTERNAL without a client certificate is refused, naming the fix", () => {
    const built = () =>
      new RabbitBroker({
        url: "amqps://127.0.0.1:5671/",
        tls: { ca: fakeTls.ca },
        authMechanism: "EXTERNAL",
      });
    expect(built).toThrow(/give tls: \{ cert, key \}/);
  });

  it("EXTERNAL with a user or password in the url is refused: the certificate says who", () => {
    const built = () =>
      new RabbitBroker({ url: "amqps://u:p@127.0.0.1:5671/", tls, authMechanism: "EXTERNAL" });
    expect(built).toThrow(/leave them out/);
  });

  it("an unknown mechanism is refused", () => {
    const built = () =>
      new RabbitBroker({
        url: "amqp://127.0.0.1:5672/",
        authMechanism: "AMQPLAIN" as unknown as "PLAIN",
      });
    expect(built).toThrow(/"AMQPLAIN" is not "PLAIN"/);
  });

  it('a vhost with a "/" not percent-encoded is refused with its encoded form', () => {
    expect(() => new RabbitBroker({ url: "amqp://u:p@127.0.0.1:5672/orders/eu" })).toThrow(
      /\/orders%2Feu for the vhost "orders\/eu"/,
    );
  });

  it("a vhost of bad percent-encoding is refused", () => {
    expect(() => new RabbitBroker({ url: "amqp://u:p@127.0.0.1:5672/a%ZZ" })).toThrow(
      /not percent-encoded UTF-8/,
    );
  });
});

describe("the stand-in", () => {
  it("accepts a certificate login and a vhost, as it accepts a user and password", async () => {
    const app = new RustStream({ name: "creds", version: "1.0.0" });
    const handled: unknown[] = [];
    app.broker(
      new RabbitBroker({
        url: `amqps://127.0.0.1:1/${path(vhost)}`,
        tls: fakeTls,
        authMechanism: "EXTERNAL",
        declare: true,
      }),
      (b) => {
        b.subscriber(new RabbitQueue("orders")).handle((order) => {
          handled.push(order);
        });
      },
    );
    const t = await TestApp.start(app);
    try {
      await t.publish("orders", { id: 1 });
      t.subscriber("orders").assertOutcomes("ack");
      expect(handled).toEqual([{ id: 1 }]);
    } finally {
      await t.stop();
    }
  });
});
