// The backlog gauge and the wait histogram of a JetStream subscriber, read through a scrape of the
// app's metrics text on the shared NATS server: the consumer's counts as its info gives them; once
// the consumer is deleted under the app, the scrape goes on without the sample, the failure counted.
import { AckPolicy, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { RustStream } from "@ruststream/core";
import { JetStreamSubject, NatsBroker } from "@ruststream/nats";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test } from "vitest";
import { prometheusMetrics } from "../src/index.js";
import { backlogLines, until } from "./scrapeSteps.js";

test("a scrape of an app on NATS shows its consumer's backlog (ready, leased) and its waits; a consumer deleted under it gives no sample, counted", async () => {
  const subject = uniqueName("natsgauge");
  const nc = await connect({ servers: requireEnv("NATS_URL"), reconnect: false });
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.add({ name: subject, subjects: [subject], storage: "memory" as never });
    // A push consumer the app binds to as it is (never made again by it), taking one message
    // unacknowledged at a time.
    await jsm.consumers.add(subject, {
      durable_name: "gauge",
      deliver_subject: `${subject}.deliver`,
      ack_policy: AckPolicy.Explicit,
      ack_wait: 30_000_000_000,
      max_ack_pending: 1,
    });
    const entered: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const app = new RustStream({ name: "natsgauge", version: "1.0.0" }).broker(
      new NatsBroker({ servers: requireEnv("NATS_URL"), publish: { jetStream: true } }),
      (b) => {
        b.subscriber<string>(
          new JetStreamSubject(subject, { stream: subject, durable: "gauge", push: true }),
        ).handle(async (m) => {
          entered.push(m);
          await held;
        });
      },
    );
    const metrics = prometheusMetrics(app);
    const running = await app.start();
    try {
      await running.publish(subject, "held");
      await until("the handler", () => entered.length === 1);
      for (const m of ["a", "b", "c"]) await running.publish(subject, m);
      const text = await metrics.text();
      expect(backlogLines(text)).toEqual(
        [
          `ruststream_backlog{name="${subject}",state="ready"} 3`,
          `ruststream_backlog{name="${subject}",state="leased"} 1`,
        ].sort(),
      );
      // The held message's first delivery: one wait sample.
      expect(text).toContain(`ruststream_wait_seconds_count{name="${subject}"} 1`);

      await jsm.consumers.delete(subject, "gauge");
      const after = await metrics.text();
      expect(backlogLines(after)).toEqual([
        `ruststream_backlog_failures_total{name="${subject}",reason="error"} 1`,
      ]);
      expect(after).toContain(`ruststream_messages_in_flight{name="${subject}"} 1`);
    } finally {
      release();
      await running.stop();
    }
  } finally {
    await jsm.streams.delete(subject).catch(() => undefined);
    await nc.close();
  }
});
