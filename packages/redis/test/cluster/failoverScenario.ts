import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, sleep } from "@ruststream/tooling-testkit";
import { expect } from "vitest";
import {
  type ConnectedRedisBroker,
  RedisBroker,
  type RedisBrokerOptions,
  type RedisPublisher,
  type RedisSource,
} from "../../src/index.js";
import { eventually } from "../appSupport.js";

// A service under load while something happens to the deployment under it (its master killed, its
// slot moved): an app reads `source` while another client publishes `total` messages 10 ms apart;
// once a quarter is handled, `disrupt` runs. The app is never restarted: it must go on by itself,
// and every message must be handled. What it measures is reported to the log and returned.

export interface DisruptionCase {
  readonly label: string;
  readonly options: () => RedisBrokerOptions;
  readonly source: RedisSource;
  readonly group: string;
  readonly publisherOf: (producer: ConnectedRedisBroker) => Promise<RedisPublisher>;
  /** What happens mid-stream; resolves once the deployment has recovered (its own measure). */
  readonly disrupt: () => Promise<void>;
  /** Checks once every message was handled, while the app still runs. */
  readonly whileRunning?: () => Promise<void>;
  readonly total?: number;
}

export interface DisruptionReport {
  /** Handled more than once (a read or an ack the disruption swallowed): at least once, not lost. */
  readonly repeats: number;
  /** The longest time between two handled messages from the disruption on: the pause, in ms. */
  readonly longestGapMs: number;
  /** When handling resumed after that pause, counted from the disruption, in ms. */
  readonly resumedMs: number;
  /** The longest time the producer waited for one publish to be answered, in ms. */
  readonly longestPublishMs: number;
  /** The app's connection states from the disruption on, as its `broker-connection` events say. */
  readonly connection: readonly string[];
}

const log = (line: string) => process.stderr.write(`${line}\n`);

export async function underDisruption(c: DisruptionCase): Promise<DisruptionReport> {
  const total = c.total ?? 600;
  const handled: Array<{ id: string; at: number }> = [];
  const app = new RustStream({ name: c.group, version: "1.0.0" }).broker(
    new RedisBroker({ ...c.options(), group: c.group }),
    (b) => {
      b.subscriber(c.source, {
        codec: {
          contentType: "text/plain",
          encode: bytes,
          decode: (p) => new TextDecoder().decode(p),
        },
      }).handle(async (message) => {
        handled.push({ id: message as string, at: Date.now() });
      });
    },
  );
  const t = await TestApp.startLive(app);
  let stopped = false;
  // The producer is another process's client: its own connection, publishing the whole time.
  const producer = await new RedisBroker(c.options()).connect();
  try {
    const publisher = await c.publisherOf(producer);
    let longestPublishMs = 0;
    let failure: unknown;
    const publishing = (async () => {
      for (let i = 0; i < total; i++) {
        const began = Date.now();
        await publisher.publish({ name: c.source.name, payload: bytes(`m${i}`) });
        longestPublishMs = Math.max(longestPublishMs, Date.now() - began);
        await sleep(10);
      }
    })().catch((error: unknown) => {
      failure = error ?? new Error("a publish failed");
    });
    const published = () => {
      if (failure !== undefined) throw failure;
      return true;
    };
    await eventually("a quarter handled", () => published() && handled.length >= total / 4, 60_000);
    const disruptedAt = Date.now();
    const handledBefore = handled.length;
    const eventsBefore = t.events.length;
    await c.disrupt();
    await eventually(
      "every message handled",
      () => published() && new Set(handled.map((h) => h.id)).size === total,
      120_000,
    );
    await publishing;
    published();
    await t.settle();
    await c.whileRunning?.();
    // Never restarted, never failed: the service went on by itself.
    t.assertRunning();
    const ids = handled.map((h) => h.id);
    expect([...new Set(ids)].sort()).toEqual([...Array(total).keys()].map((i) => `m${i}`).sort());
    expect(handledBefore, "the disruption came mid-stream").toBeLessThan(total);
    // The pause: the longest stretch without a message handled, from the disruption on.
    let previous = disruptedAt;
    let longestGapMs = 0;
    let resumedAt = disruptedAt;
    for (const { at } of handled.filter((h) => h.at >= disruptedAt)) {
      if (at - previous > longestGapMs) {
        longestGapMs = at - previous;
        resumedAt = at;
      }
      previous = at;
    }
    const report = {
      repeats: ids.length - new Set(ids).size,
      longestGapMs,
      resumedMs: resumedAt - disruptedAt,
      longestPublishMs,
      connection: t.events
        .slice(eventsBefore)
        .flatMap((e) =>
          e.type === "broker-connection"
            ? [`${e.state}${e.reason === undefined ? "" : `: ${e.reason}`}`]
            : [],
        ),
    };
    log(
      `[${c.label}] ${total} messages, all handled (${report.repeats} twice); handling paused ${report.longestGapMs} ms, resuming ${report.resumedMs} ms after the disruption began; the longest publish took ${report.longestPublishMs} ms; the connection: ${report.connection.join(" -> ")}`,
    );
    stopped = true;
    const stop = await t.stop();
    expect(stop.failed, String(stop.failure)).toBe(false);
    return report;
  } finally {
    await producer.shutdown();
    if (!stopped) await t.stop();
  }
}
