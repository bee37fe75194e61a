import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { type RunningApp, type RuntimeEvent, RustStream } from "@ruststream/core";
import { bytes, requireEnv, TcpRelay, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  NatsBroker,
  NatsPublish,
  type PushBinding,
} from "../src/index.js";
import { deleteStreams, eventually, rawClient } from "./env.live.js";
import { OwnServer } from "./ownServer.js";

// A consumer the server no longer has (deleted under a running subscription, as an operator or an
// inactive threshold would) is reported as the app's background failure, naming it and the fix.
// One the subscription creates (a pull durable, a declared push consumer) is created again at
// once and its recovery reported; a push consumer bound with `push: true` is its owner's: asked
// for again until it is back, then bound, its recovery reported. Nothing published meanwhile is lost.

let connected: ConnectedNatsBroker | undefined;
let running: RunningApp | undefined;
let own: OwnServer | undefined;
let relay: TcpRelay | undefined;
const streams: string[] = [];
afterEach(async () => {
  await running?.stop();
  running = undefined;
  await connected?.shutdown();
  connected = undefined;
  await relay?.cut();
  relay = undefined;
  await own?.dispose();
  own = undefined;
  await deleteStreams(...streams.splice(0));
});

async function deleteConsumer(stream: string, consumer: string): Promise<void> {
  const nc = await rawClient();
  try {
    await (await jetstreamManager(nc)).consumers.delete(stream, consumer);
  } finally {
    await nc.close();
  }
}

it("a durable pull consumer deleted under a subscription is reported, created again, its recovery reported, and delivery goes on", async () => {
  const subject = uniqueName("gone");
  streams.push(subject);
  const reports: string[] = [];
  const errors: unknown[] = [];
  connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect({
    onBackground: {
      failed: (source, error) => {
        reports.push(`failed ${source}`);
        errors.push(error);
      },
      recovered: (source) => reports.push(`recovered ${source}`),
    },
  });
  const subscription = await connected.subscribe(
    new JetStreamSubject(subject, {
      stream: subject,
      durable: "gone",
      pullExpiresMs: 1000,
      declare: { subjects: [subject], storage: "memory" },
    }),
  );
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  await publisher.publish({ name: subject, payload: bytes("before") });
  const first = (await subscription.next()).value;
  expect(first && text(first.payload)).toBe("before");
  await first?.ack();

  await deleteConsumer(subject, "gone");
  await publisher.publish({ name: subject, payload: bytes("after") });
  // The new consumer starts where the descriptor says (all): "before" again, then "after".
  const seen: string[] = [];
  while (!seen.includes("after")) {
    const d = (await subscription.next()).value;
    if (d === undefined) break;
    seen.push(text(d.payload));
    await d.ack();
  }
  expect(seen).toEqual(["before", "after"]);
  // Created again before any message of the new consumer came.
  expect(reports).toEqual([`failed nats:${subject}/gone`, `recovered nats:${subject}/gone`]);
  expect(String(errors[0])).toContain(
    `the consumer "gone" on the JetStream stream "${subject}" is gone from the server`,
  );
});

/** An app handling the strings published to `subject` through `push`, its events recorded. */
async function pushApp(subject: string, push: PushBinding, handled: string[]) {
  const events: RuntimeEvent[] = [];
  const app = new RustStream({ name: "gone", version: "1.0.0" }).broker(
    new NatsBroker({ servers: requireEnv("NATS_URL") }),
    (b) => {
      b.subscriber<string>(
        new JetStreamSubject(subject, {
          stream: subject,
          durable: "pushed",
          push,
          declare: { subjects: [subject], storage: "memory" },
        }),
      ).handle((value) => {
        handled.push(value);
      });
    },
  );
  running = await app.start({ observers: [(event) => events.push(event)] });
  return events;
}

/** The background reports among `events`: failures with their error's text. */
function backgroundOf(events: readonly RuntimeEvent[]) {
  const reports: { type: string; source: string; error?: string }[] = [];
  for (const event of events) {
    if (event.type === "background-failure")
      reports.push({ type: event.type, source: event.source, error: String(event.error) });
    else if (event.type === "background-recovered")
      reports.push({ type: event.type, source: event.source });
  }
  return reports;
}

it("a declared push consumer deleted under an app is reported, created again, its recovery reported, and what was published meanwhile delivered", async () => {
  const subject = uniqueName("gonePush");
  streams.push(subject);
  const handled: string[] = [];
  const events = await pushApp(
    subject,
    { declare: { deliverSubject: `${subject}.deliver`, idleHeartbeatMs: 1000 } },
    handled,
  );
  const app = running as RunningApp;
  await app.publish(subject, "before");
  await eventually(() => handled.includes("before"), 10_000, "the first message handled");

  await deleteConsumer(subject, "pushed");
  await app.publish(subject, "meanwhile");
  const source = `nats:${subject}/pushed`;
  await eventually(
    () => backgroundOf(events).some((e) => e.type === "background-recovered"),
    20_000,
    "the consumer's recovery reported",
  );
  const reported = backgroundOf(events);
  expect(reported.map(({ type, source }) => ({ type, source }))).toEqual([
    { type: "background-failure", source },
    { type: "background-recovered", source },
  ]);
  expect(reported[0]?.error).toContain(
    `the consumer "pushed" on the JetStream stream "${subject}" is gone from the server`,
  );
  // Created again from the declaration (deliver all): every message the stream holds, again.
  await eventually(() => handled.includes("meanwhile"), 10_000, "the message published meanwhile");
  expect(handled).toEqual(["before", "before", "meanwhile"]);
});

it("a push: true consumer deleted under an app is reported with the fix, asked for until it is made again by hand, then bound, its recovery reported, nothing lost", async () => {
  const subject = uniqueName("goneBound");
  streams.push(subject);
  const nc = await rawClient();
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: subject, subjects: [subject], storage: "memory" as never });
    const consumer = (start?: number) =>
      jsm.consumers.add(subject, {
        durable_name: "pushed",
        deliver_subject: `${subject}.deliver`,
        ack_policy: AckPolicy.Explicit,
        ...(start === undefined
          ? {}
          : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start }),
      });
    await consumer();
    const handled: string[] = [];
    const events = await pushApp(subject, true, handled);
    const app = running as RunningApp;
    await app.publish(subject, "before");
    await eventually(() => handled.includes("before"), 10_000, "the first message handled");

    await jsm.consumers.delete(subject, "pushed");
    const source = `nats:${subject}/pushed`;
    await eventually(
      () => backgroundOf(events).length > 0,
      20_000,
      "the consumer's failure reported",
    );
    const [failure] = backgroundOf(events);
    expect(failure).toMatchObject({ type: "background-failure", source });
    expect(failure?.error).toContain(
      `the push consumer "pushed" on the JetStream stream "${subject}" is gone from the server`,
    );
    expect(failure?.error).toContain(`nats consumer add ${subject} pushed`);
    expect(failure?.error).toContain("push: { declare: { deliverSubject } }");
    await app.publish(subject, "meanwhile");

    // Its owner makes it again, from the message after the one handled.
    await consumer(2);
    await eventually(
      () => backgroundOf(events).some((e) => e.type === "background-recovered"),
      20_000,
      "the consumer's recovery reported",
    );
    expect(backgroundOf(events).map(({ type, source }) => ({ type, source }))).toEqual([
      { type: "background-failure", source },
      { type: "background-recovered", source },
    ]);
    await eventually(
      () => handled.includes("meanwhile"),
      10_000,
      "the message published meanwhile",
    );
    expect(handled).toEqual(["before", "meanwhile"]);
  } finally {
    await nc.close();
  }
});

it("a declared push consumer with heartbeats, deleted where the account may not hear the server's advisories: its missed heartbeats find it gone, it is reported, created again, recovered, nothing lost", async () => {
  own = await OwnServer.start({
    jetStream: true,
    config: `
authorization {
  users: [
    { user: app, password: unheard, permissions: {
      publish: { allow: [">"] }
      subscribe: { allow: [">"], deny: ["$JS.EVENT.ADVISORY.>"] }
    } }
  ]
}
`,
  });
  const broker = { servers: own.url, credentials: { user: "app", password: "unheard" } } as const;
  const reports: string[] = [];
  connected = await new NatsBroker(broker).connect({
    onBackground: {
      failed: (source) => reports.push(`failed ${source}`),
      recovered: (source) => reports.push(`recovered ${source}`),
    },
  });
  const subject = uniqueName("unheard");
  const subscription = await connected.subscribe(
    new JetStreamSubject(subject, {
      stream: subject,
      durable: "pushed",
      push: { declare: { deliverSubject: `${subject}.deliver`, idleHeartbeatMs: 500 } },
      declare: { subjects: [subject], storage: "memory" },
    }),
  );
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  await publisher.publish({ name: subject, payload: bytes("before") });
  const first = (await subscription.next()).value;
  expect(first && text(first.payload)).toBe("before");
  await first?.ack();

  // Deleted by another client of the account, which may not hear the advisory either.
  const nc = await connect({ servers: own.url, user: "app", pass: "unheard" });
  try {
    await (await jetstreamManager(nc)).consumers.delete(subject, "pushed");
  } finally {
    await nc.close();
  }
  await publisher.publish({ name: subject, payload: bytes("meanwhile") });
  const seen: string[] = [];
  while (!seen.includes("meanwhile")) {
    const d = (await subscription.next()).value;
    if (d === undefined) break;
    seen.push(text(d.payload));
    await d.ack();
  }
  // Created again from the declaration (deliver all): the stream's messages again, in order.
  expect(seen).toEqual(["before", "meanwhile"]);
  expect(reports).toEqual([`failed nats:${subject}/pushed`, `recovered nats:${subject}/pushed`]);
});

it("an ephemeral push consumer lost past its inactive threshold while its connection was cut is reported, created again after the last message received, recovered, and what was published meanwhile delivered once", async () => {
  const url = requireEnv("NATS_URL");
  const server = new URL(url);
  relay = new TcpRelay({ host: server.hostname, port: Number(server.port) });
  await relay.start();
  const reports: string[] = [];
  const errors: unknown[] = [];
  connected = await new NatsBroker({ servers: relay.url(url) }).connect({
    onBackground: {
      failed: (source, error) => {
        reports.push(`failed ${source}`);
        errors.push(error);
      },
      recovered: (source) => reports.push(`recovered ${source}`),
    },
  });
  const subject = uniqueName("lapsed");
  streams.push(subject);
  const subscription = await connected.subscribe(
    new JetStreamSubject(subject, {
      stream: subject,
      inactiveThresholdMs: 1000,
      // Heartbeats: how a consumer lapsed while the connection was away is heard of (its
      // deletion's advisory came while nothing listened).
      push: { declare: { idleHeartbeatMs: 500 } },
      declare: { subjects: [subject], storage: "memory" },
    }),
  );
  const name = (subscription as unknown as { consumerName: string }).consumerName;
  const nc = await rawClient();
  try {
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await js.publish(subject, "m1");
    await js.publish(subject, "m2");
    for (const expected of ["m1", "m2"]) {
      const d = (await subscription.next()).value;
      expect(d && text(d.payload)).toBe(expected);
      await d?.ack();
    }
    await connected.link.settlementsWritten();

    // The connection cut (reconnects refused): nothing listens on the deliver subject, and the
    // server deletes the consumer once its threshold passed.
    await relay.cut();
    await eventually(
      async () =>
        (await jsm.consumers.info(subject, name).then(
          () => true,
          () => false,
        )) === false,
      15_000,
      "the server deleting the lapsed consumer",
    );
    await js.publish(subject, "m3");
    await js.publish(subject, "m4");
    await relay.restore();

    const seen: string[] = [];
    while (seen.length < 2) {
      const d = (await subscription.next()).value;
      if (d === undefined) throw new Error("the subscription ended");
      seen.push(`${text(d.payload)}:${d.redeliveryCount}`);
      await d.ack();
    }
    // Created again at the sequence after the last one received (an ephemeral one's start), so
    // m1 and m2 do not come again and m3, m4 come once each, as first deliveries.
    expect(seen).toEqual(["m3:1", "m4:1"]);
    const source = `nats:${subject}/${name}`;
    expect(reports).toEqual([`failed ${source}`, `recovered ${source}`]);
    expect(String(errors[0])).toContain(
      `the consumer "${name}" on the JetStream stream "${subject}" is gone from the server`,
    );
    // A new ephemeral consumer, on a fresh inbox of its own.
    const now = (subscription as unknown as { consumerName: string }).consumerName;
    expect(now).not.toBe(name);
    const info = await jsm.consumers.info(subject, now);
    expect(String(info.config.deliver_subject)).toMatch(/^_INBOX\./);
    // And on: what is published after comes.
    await js.publish(subject, "m5");
    const next = (await subscription.next()).value;
    expect(next && text(next.payload)).toBe("m5");
    await next?.ack();
  } finally {
    await nc.close();
  }
});

it("a subscription closed while its consumer is gone reports the failure ended, so the app's health does not keep naming it", async () => {
  const subject = uniqueName("goneClosed");
  streams.push(subject);
  const reports: string[] = [];
  const nc = await rawClient();
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: subject, subjects: [subject], storage: "memory" as never });
    await jsm.consumers.add(subject, {
      durable_name: "pushed",
      deliver_subject: `${subject}.deliver`,
      ack_policy: AckPolicy.Explicit,
    });
    connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect({
      onBackground: {
        failed: (source) => reports.push(`failed ${source}`),
        recovered: (source) => reports.push(`recovered ${source}`),
      },
    });
    // Bound with push: true: gone, it is its owner's to make again, so it stays failing.
    const subscription = await connected.subscribe(
      new JetStreamSubject(subject, { stream: subject, durable: "pushed", push: true }),
    );
    // A message handed over: the subscription listens (for the deletion's advisory too).
    await jetstream(nc).publish(subject, "m1");
    const first = (await subscription.next()).value;
    expect(first && text(first.payload)).toBe("m1");
    await first?.ack();
    const reading = subscription.next();
    await jsm.consumers.delete(subject, "pushed");
    const source = `nats:${subject}/pushed`;
    await eventually(() => reports.length > 0, 20_000, "the consumer's failure reported");
    expect(reports).toEqual([`failed ${source}`]);

    await subscription.close();
    expect((await reading).done).toBe(true);
    // Ended with the subscription: said at its close, once.
    expect(reports).toEqual([`failed ${source}`, `recovered ${source}`]);
  } finally {
    await nc.close();
  }
});
