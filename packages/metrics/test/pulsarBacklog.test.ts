// The backlog gauge of a Pulsar Shared subscriber, read through a scrape of the app's metrics text
// on the shared Pulsar broker: the subscription's msgBacklog (`ready`, dispatched entries
// included) and this consumer's unacknowledged messages (`leased`) while its handler holds the
// first message and three wait in its receiver queue; once released and all settled, 0 and 0.
import { RustStream } from "@ruststream/core";
import { PulsarBroker, PulsarShared } from "@ruststream/pulsar";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test } from "vitest";
import { prometheusMetrics } from "../src/index.js";
import { backlogLines, until } from "./scrapeSteps.js";

test("a scrape of an app on Pulsar shows its Shared subscription's backlog: ready 4 and leased 4 with one message held and three queued, 0 and 0 once all are settled", async () => {
  const topic = uniqueName("pulsargauge");
  const entered: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "pulsargauge", version: "1.0.0" }).broker(
    new PulsarBroker({ url: requireEnv("PULSAR_URL") }),
    (b) => {
      b.subscriber<string>(new PulsarShared(topic, { subscription: "gauge" })).handle(async (m) => {
        entered.push(m);
        await held;
      });
    },
  );
  const metrics = prometheusMetrics(app);
  const running = await app.start();
  try {
    await running.publish(topic, "held");
    await until("the handler", () => entered.length === 1);
    for (const m of ["a", "b", "c"]) await running.publish(topic, m);
    const lines = (ready: number, leased: number) =>
      [
        `ruststream_backlog{name="${topic}",state="ready"} ${ready}`,
        `ruststream_backlog{name="${topic}",state="leased"} ${leased}`,
      ].sort();
    // The three behind the held one reach the receiver queue a moment after their publish.
    let text = "";
    await until("ready 4, leased 4", async () => {
      text = await metrics.text();
      return JSON.stringify(backlogLines(text)) === JSON.stringify(lines(4, 4));
    }).catch(() => undefined);
    expect(backlogLines(text)).toEqual(lines(4, 4));
    expect(entered).toEqual(["held"]);

    release();
    await until("all four handled", () => entered.length === 4);
    // Pulsar's acks get no answer: the broker counts them a moment later.
    await until("ready 0, leased 0", async () => {
      text = await metrics.text();
      return JSON.stringify(backlogLines(text)) === JSON.stringify(lines(0, 0));
    }).catch(() => undefined);
    expect(backlogLines(text)).toEqual(lines(0, 0));
  } finally {
    release();
    await running.stop();
  }
});
