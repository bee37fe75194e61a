import { jetstreamManager } from "@nats-io/jetstream";
import {
  bytes as bytesCodec,
  type HandlerContext,
  headerNames,
  RustStream,
  retry,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices, type RustService } from "@ruststream/tooling-interop";
import { headersAsText, sortedByName } from "@ruststream/tooling-interop/text";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import { JetStreamSubject, NatsSubject } from "../src/index.js";
import { eventually, rawClient } from "./env.live.js";
import {
  deleteTestStreams,
  live,
  rustConsumer,
  rustPublish,
  type Sent,
  stream,
  tsPublish,
  withKey,
} from "./interopSupport.js";

// One consumer, two languages: a RustStream service (ruststream-nats 0.7.1, tooling/interop's
// `serve`) and an app of ours are members of one durable JetStream consumer, then of one core NATS
// queue group. Each handles part of the messages, whichever side published them; together they
// handle every one once, headers and key as sent. A message that always fails is tried by whichever
// member the server hands it to, its attempts counted across both, and dead-lettered once, by the
// member that had its last attempt, in that runtime's own form, which our reader reads.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
  await deleteTestStreams();
});

/** A delivery one member's handler saw. */
interface Handled {
  readonly payload: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly key: string | undefined;
  readonly attempt: number;
  readonly outcome: "ack" | "retry";
}

/** A dead letter our reader saw. */
interface Dead {
  readonly payload: string;
  readonly headers: readonly (readonly [string, string])[];
}

/**
 * Our member on `source` (retrying `failing`, capped at three attempts, then dead-lettered to
 * `dlq`), beside our reader of `dlq`, where either side's dead letter lands.
 */
async function tsMember(
  source: NatsSubject | JetStreamSubject,
  dlq: string,
  failing: string,
): Promise<{ handled: Handled[]; dead: Dead[] }> {
  const handled: Handled[] = [];
  const dead: Dead[] = [];
  const headersOf = (ctx: HandlerContext) =>
    sortedByName([...ctx.headers.entries()].map(([n, v]) => [n, Buffer.from(v).toString()]));
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
    b.subscriber(source, { codec: bytesCodec })
      .maxAttempts(3)
      .deadLetter(dlq)
      .handle((payload: Uint8Array, ctx: HandlerContext) => {
        const outcome = text(payload) === failing ? "retry" : "ack";
        handled.push({
          payload: text(payload),
          headers: headersOf(ctx),
          key:
            ctx.delivery.partitionKey === undefined ? undefined : text(ctx.delivery.partitionKey),
          attempt: ctx.attempt,
          outcome,
        });
        return outcome === "retry" ? retry() : undefined;
      });
    // The dead letter carries the attempts made at the source: the reader's cap is above them.
    b.subscriber(new NatsSubject(dlq), { codec: bytesCodec })
      .maxAttempts(10)
      .handle((payload: Uint8Array, ctx: HandlerContext) => {
        dead.push({ payload: text(payload), headers: headersOf(ctx) });
      });
  });
  t = await TestApp.startLive(app);
  return { handled, dead };
}

/** The crate's member's deliveries, in the form ours records. */
const rustHandled = (rust: RustService): Handled[] =>
  rust.deliveries.map((d) => ({
    payload: text(d.payload),
    headers: sortedByName(headersAsText(d.headers)),
    key: d.partitionKey?.toString(),
    attempt: d.attempt,
    outcome: d.outcome === "retry" ? "retry" : "ack",
  }));

/** `count` messages from one side, each with a header naming it and a key of its own. */
const batch = (from: string, count: number): Sent[] =>
  [...Array(count).keys()].map((i) => ({
    payload: bytes(`${from}-${i}`),
    headers: [["x-from", from]],
    key: `key-${from}-${i}`,
  }));

const FAILING = '{"job":11}';
const failing: Sent = { payload: bytes(FAILING), headers: [["x-trace", "t-11"]], key: "job-11" };

/** 40 messages from each side, then the failing one from ours: answers the 80 that succeed. */
async function publishFromBoth(
  subject: string,
  rust: RustService,
  jetStream: boolean,
): Promise<Sent[]> {
  const fromTs = batch("ts", 40);
  const fromRust = batch("rust", 40);
  await tsPublish(subject, fromTs, jetStream);
  await rustPublish(rust, subject, fromRust);
  await tsPublish(subject, [failing], jetStream);
  return [...fromTs, ...fromRust];
}

/** Until the members handled `count` messages between them and the failing one was dead-lettered. */
function untilDone(
  ours: { handled: readonly Handled[]; dead: readonly Dead[] },
  rust: RustService,
  count: number,
): Promise<void> {
  return eventually(
    () =>
      ours.dead.length > 0 &&
      [...ours.handled, ...rustHandled(rust)].filter((h) => h.outcome === "ack").length >= count,
    30_000,
    "every message handled and the failing one dead-lettered",
  );
}

/**
 * What both members handled: every message of `sent` once (by one member, at its first attempt,
 * with its headers and key), part of them each, and the failing one tried three times in all,
 * attempts 1, 2 and 3 whichever member had each. Answers who had the last attempt.
 */
function expectShared(
  ours: readonly Handled[],
  theirs: readonly Handled[],
  sent: readonly Sent[],
): "ours" | "rust" {
  const done = [...ours, ...theirs].filter((h) => h.outcome === "ack");
  expect(done.map((h) => h.payload).sort()).toEqual(sent.map((m) => text(m.payload)).sort());
  expect(ours.some((h) => h.outcome === "ack")).toBe(true);
  expect(theirs.some((h) => h.outcome === "ack")).toBe(true);
  const byPayload = new Map(sent.map((m) => [text(m.payload), m]));
  for (const h of done) {
    const m = byPayload.get(h.payload) as Sent;
    expect([h.payload, h.attempt, h.key, h.headers]).toEqual([h.payload, 1, m.key, withKey(m)]);
  }
  const tries = [
    ...ours.filter((h) => h.payload === FAILING).map((h) => ({ by: "ours" as const, ...h })),
    ...theirs.filter((h) => h.payload === FAILING).map((h) => ({ by: "rust" as const, ...h })),
  ].sort((a, b) => a.attempt - b.attempt);
  expect(tries.map((h) => [h.attempt, h.key])).toEqual([
    [1, "job-11"],
    [2, "job-11"],
    [3, "job-11"],
  ]);
  return tries[2]?.by ?? "ours";
}

interopSuite(
  "one NATS consumer, a TypeScript and a Rust member",
  () => {
    it("one durable JetStream consumer: each member takes part, every message handled once and acked, the failing one's three deliveries counted by the server across both and dead-lettered once", async () => {
      const subject = uniqueName("interop-shared-js");
      const dlq = `${subject}-dlq`;
      await stream(subject, [subject]);
      // The crate creates the durable consumer; ours joins it with the same settings (the
      // crate's defaults: ack wait 30 s, 1024 unacked).
      const rust = await rustConsumer(subject, {
        stream: subject,
        group: "shared",
        maxAttempts: 3,
        deadLetter: dlq,
      });
      await rust.failOn([FAILING]);
      const ours = await tsMember(
        new JetStreamSubject(subject, {
          stream: subject,
          durable: "shared",
          ackWaitMs: 30_000,
          maxAckPending: 1024,
          fetchSize: 8,
        }),
        dlq,
        FAILING,
      );
      const all = await publishFromBoth(subject, rust, true);
      await untilDone(ours, rust, all.length);
      // The server's side: every message delivered once but the failing one (three times), and
      // every delivery acked, by whichever member had it.
      const nc = await rawClient();
      try {
        const jsm = await jetstreamManager(nc);
        await eventually(
          async () => (await jsm.consumers.info(subject, "shared")).num_ack_pending === 0,
          10_000,
          "every delivery acked",
        );
        const info = await jsm.consumers.info(subject, "shared");
        expect({
          deliveries: info.delivered.consumer_seq,
          ackFloor: info.ack_floor.stream_seq,
          pending: info.num_pending,
        }).toEqual({ deliveries: all.length + 3, ackFloor: all.length + 1, pending: 0 });
      } finally {
        await nc.close();
      }
      const last = expectShared(ours.handled, rustHandled(rust), all);
      // One dead letter: the consumer made no fourth delivery that could write another.
      expect(ours.dead.map((d) => d.payload)).toEqual([FAILING]);
      const headers = ours.dead[0]?.headers ?? [];
      if (last === "rust") {
        // The crate's: the message as it arrived, its retry count raised by one from what it
        // carried (none), whatever the server counted.
        expect(headers).toEqual(sortedByName([...withKey(failing), [headerNames.retryCount, "1"]]));
      } else {
        // Ours: its origin, the consumer, and the deliveries made, the server's count.
        expect(headers).toEqual(
          expect.arrayContaining([
            ...withKey(failing),
            ["x-ruststream-dlq-source", subject],
            ["x-ruststream-dlq-consumer", "shared"],
            ["x-ruststream-dlq-reason", "max-attempts"],
            [headerNames.retryCount, "3"],
          ]),
        );
      }
    });

    it("one core NATS queue group: each member takes part, every message handled once, the failing one's copies carry the retry count to whichever member, and its dead letter carries 3", async () => {
      const subject = uniqueName("interop-shared-core");
      const dlq = `${subject}-dlq`;
      const rust = await rustConsumer(subject, {
        group: "shared",
        queue: true,
        maxAttempts: 3,
        deadLetter: dlq,
      });
      await rust.failOn([FAILING]);
      const ours = await tsMember(new NatsSubject(subject, { queue: "shared" }), dlq, FAILING);
      const all = await publishFromBoth(subject, rust, false);
      await untilDone(ours, rust, all.length);
      const last = expectShared(ours.handled, rustHandled(rust), all);
      expect(ours.dead.map((d) => d.payload)).toEqual([FAILING]);
      // Core NATS counts nothing: each runtime's copy carries the retry count, which the other
      // reads as the attempt, and either's dead letter carries the three attempts made.
      const headers = ours.dead[0]?.headers ?? [];
      expect(new Map(headers).get(headerNames.retryCount)).toBe("3");
      expect(headers.some(([n]) => n === "x-ruststream-dlq-source")).toBe(last === "ours");
    });
  },
  { timeout: 120_000 },
);
