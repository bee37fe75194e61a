import { type JsMsg, jetstream } from "@nats-io/jetstream";
import { headerNames, RustStream, readDeadLetterOrigin, retry } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  JetStreamSubject,
  NatsBroker,
  type NatsSource,
  NatsSubject,
  OrderedJetStreamSubject,
} from "../src/index.js";
import { eventually, rawClient } from "./env.live.js";
import { liveBroker, madeInEachTest } from "./liveTest.js";

// Whole apps through the runtime: attempts counted by the server on JetStream and by the copy's
// header on core NATS, and a cap that leaves exactly the messages that always fail in the dead
// letter, with their origin.

const made = madeInEachTest();

const inProcess = () => new NatsBroker({ servers: "nats://in-process.invalid:4222" });

interface Job {
  readonly id: number;
}

const jobs = [...Array(9).keys()];
const failing = jobs.filter((id) => id % 3 === 0);

/** A durable JetStream consumer on `subject`, its stream storing the dead letters too. */
const durableOn = (subject: string) =>
  new JetStreamSubject(subject, {
    stream: subject,
    durable: "capped",
    declare: { subjects: [subject, `${subject}-dlq`], storage: "memory" },
  });

/**
 * Nine jobs on a JetStream consumer (durable unless given); every third always fails; three
 * attempts, then the dead letter.
 */
function cappedApp(
  broker: NatsBroker,
  subject: string,
  calls: Map<number, number[]>,
  source: NatsSource = durableOn(subject),
) {
  return new RustStream({ name: "capped", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<Job>(source)
      .maxAttempts(3)
      .deadLetter(`${subject}-dlq`)
      .onFailure({ backoff: { initialMs: 10, maxMs: 20 } })
      .handle((job, ctx) => {
        calls.set(job.id, [...(calls.get(job.id) ?? []), ctx.attempt]);
        if (job.id % 3 === 0) throw new Error(`job ${job.id} always fails`);
      });
  });
}

describe("a cap and a dead letter on a JetStream consumer", () => {
  it("on the real server: attempts from the server's count, the dead letter with its origin", async () => {
    const subject = uniqueName("capped");
    made.streams.push(subject);
    const calls = new Map<number, number[]>();
    const t = made.app(
      await TestApp.startLive(cappedApp(liveBroker(), subject, calls), { withinMs: 20_000 }),
    );
    for (const id of jobs) await t.running.publish(subject, { id });
    await eventually(
      () => failing.every((id) => calls.get(id)?.length === 3) && jobs.every((id) => calls.has(id)),
      20_000,
      "every job handled, the failing ones three times",
    );
    expect(Object.fromEntries(calls)).toEqual(
      Object.fromEntries(jobs.map((id) => [id, id % 3 === 0 ? [1, 2, 3] : [1]])),
    );
    // The dead letters, read from the stream that stores their subject.
    const nc = await rawClient();
    try {
      const consumer = await jetstream(nc).consumers.get(subject, {
        filter_subjects: [`${subject}-dlq`],
      });
      const dead: JsMsg[] = [];
      await eventually(
        async () => {
          const m = await consumer.next({ expires: 1000 });
          if (m) dead.push(m);
          return dead.length === failing.length;
        },
        15_000,
        "the dead letters",
      );
      const ids = dead.map((m) => (JSON.parse(m.string()) as Job).id).sort((a, b) => a - b);
      expect(ids).toEqual(failing);
      for (const m of dead) {
        const headers = new Map([...(m.headers ?? [])].map(([k, v]) => [k, v[0]]));
        expect(headers.get("x-ruststream-dlq-source")).toBe(subject);
        expect(headers.get("x-ruststream-dlq-reason")).toBe("max-attempts");
        expect(headers.get("x-ruststream-dlq-position")).toMatch(new RegExp(`^${subject}:\\d+$`));
        expect(headers.get("x-ruststream-dlq-consumer")).toBe("capped");
        expect(headers.get(headerNames.retryCount)).toBe("3");
      }
    } finally {
      await nc.close();
    }
  });

  it("in-process: the same attempts, the dead letters in published() with their origin", async () => {
    const subject = uniqueName("capped");
    const calls = new Map<number, number[]>();
    const t = made.app(await TestApp.start(cappedApp(inProcess(), subject, calls)));
    for (const id of jobs) await t.publish(subject, { id });
    // Each retry waits its backoff at the server (nak with a delay), on the test's clock.
    for (let i = 0; i < 3; i++) await t.advance(50);
    expect(Object.fromEntries(calls)).toEqual(
      Object.fromEntries(jobs.map((id) => [id, id % 3 === 0 ? [1, 2, 3] : [1]])),
    );
    const dead = t.published(`${subject}-dlq`);
    expect(dead.map((m) => (m.value as Job).id).sort((a, b) => a - b)).toEqual(failing);
    for (const m of dead) {
      expect(readDeadLetterOrigin(m.headers)).toMatchObject({
        source: subject,
        reason: "max-attempts",
      });
      expect(m.headers.getString("x-ruststream-dlq-consumer")).toBe("capped");
      expect(m.headers.getString(headerNames.retryCount)).toBe("3");
    }
  });
});

describe("a retry on core NATS", () => {
  it("is a copy carrying the retry count, counted as the next attempt", async () => {
    const subject = uniqueName("core-retry");
    const seen: { attempt: number; retryCount: string | undefined }[] = [];
    const app = new RustStream({ name: "core-retry", version: "1.0.0" }).broker(
      liveBroker(),
      (b) => {
        b.subscriber<Job>(new NatsSubject(subject)).handle((_job, ctx) => {
          seen.push({
            attempt: ctx.attempt,
            retryCount: ctx.headers.getString(headerNames.retryCount),
          });
          return ctx.attempt === 1 ? retry() : undefined;
        });
      },
    );
    const t = made.app(await TestApp.startLive(app));
    await t.running.publish(subject, { id: 1 });
    await eventually(() => seen.length === 2, 10_000, "the retry");
    expect(seen).toEqual([
      { attempt: 1, retryCount: undefined },
      { attempt: 2, retryCount: "1" },
    ]);
  });
});

describe("a cap and a dead letter on an ordered consumer", () => {
  // Ack policy none: each retry is a copy the runtime publishes to the subject, which the stream
  // stores and the consumer reads in its turn, counted by the copy's header.
  const orderedOn = (subject: string) =>
    new OrderedJetStreamSubject(subject, {
      stream: subject,
      declare: { subjects: [subject, `${subject}-dlq`], storage: "memory" },
    });
  const expected = Object.fromEntries(jobs.map((id) => [id, id % 3 === 0 ? [1, 2, 3] : [1]]));

  it("on the real server: attempts from the copies, the failing jobs dead-lettered with the retry count", async () => {
    const subject = uniqueName("capped-ordered");
    made.streams.push(subject);
    const calls = new Map<number, number[]>();
    const app = cappedApp(liveBroker(), subject, calls, orderedOn(subject));
    const t = made.app(await TestApp.startLive(app, { withinMs: 20_000 }));
    for (const id of jobs) await t.running.publish(subject, { id });
    await eventually(
      () => failing.every((id) => calls.get(id)?.length === 3) && jobs.every((id) => calls.has(id)),
      20_000,
      "every job handled, the failing ones three times",
    );
    expect(Object.fromEntries(calls)).toEqual(expected);
    const nc = await rawClient();
    try {
      const consumer = await jetstream(nc).consumers.get(subject, {
        filter_subjects: [`${subject}-dlq`],
      });
      const dead: JsMsg[] = [];
      await eventually(
        async () => {
          const m = await consumer.next({ expires: 1000 });
          if (m) dead.push(m);
          return dead.length === failing.length;
        },
        15_000,
        "the dead letters",
      );
      expect(dead.map((m) => (JSON.parse(m.string()) as Job).id).sort((a, b) => a - b)).toEqual(
        failing,
      );
      for (const m of dead) expect(m.headers?.get(headerNames.retryCount)).toBe("3");
    } finally {
      await nc.close();
    }
  });

  it("in-process: the same attempts, the dead letters in published()", async () => {
    const subject = uniqueName("capped-ordered");
    const calls = new Map<number, number[]>();
    const t = made.app(
      await TestApp.start(cappedApp(inProcess(), subject, calls, orderedOn(subject))),
    );
    for (const id of jobs) await t.publish(subject, { id });
    // Each retry's backoff is the runtime's, on the test's clock, then the copy is published.
    for (let i = 0; i < 3; i++) await t.advance(50);
    expect(Object.fromEntries(calls)).toEqual(expected);
    const dead = t.published(`${subject}-dlq`);
    expect(dead.map((m) => (m.value as Job).id).sort((a, b) => a - b)).toEqual(failing);
    for (const m of dead) {
      expect(readDeadLetterOrigin(m.headers)).toMatchObject({
        source: subject,
        reason: "max-attempts",
      });
      expect(m.headers.getString(headerNames.retryCount)).toBe("3");
    }
  });
});
