import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { KvDelivery, KvWatch, kvSubject, NatsBroker } from "../src/index.js";
import { eventually } from "./env.live.js";
import { liveBroker, madeInEachTest } from "./liveTest.js";

// A whole app on a KV watch: its handler sees each put with its key and revision, and puts to a
// key of the bucket through ctx.out; in-process and on the real server.

const made = madeInEachTest();

/** Watches the bucket's `flags.*` keys; writes what it saw to the `audit` key. */
function flagsApp(broker: NatsBroker, bucket: string, seen: string[]) {
  return new RustStream({ name: "flags", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<boolean>(
      new KvWatch(bucket, {
        keys: "flags.*",
        start: "all",
        declare: { history: 5, storage: "memory" },
      }),
    )
      .publishes({ audit: kvSubject(bucket, "audit") })
      .handle(async (on, ctx) => {
        const entry = ctx.delivery as KvDelivery;
        if (!(entry instanceof KvDelivery)) throw new Error("not a KV entry");
        seen.push(`${entry.key}=${on}@${entry.revision}`);
        await ctx.out.audit.publish({ key: entry.key, revision: String(entry.revision) });
      });
  });
}

describe("an app on a KV watch", () => {
  it("in-process: each put handled with its key and revision, the audit put to the bucket", async () => {
    const bucket = uniqueName("flags").replaceAll(".", "_");
    const seen: string[] = [];
    const t = made.app(
      await TestApp.start(
        flagsApp(new NatsBroker({ servers: "nats://in-process.invalid:4222" }), bucket, seen),
      ),
    );
    await t.publish(kvSubject(bucket, "flags.dark"), true);
    await t.publish(kvSubject(bucket, "flags.beta"), false);
    await t.publish(kvSubject(bucket, "flags.dark"), false);
    // A put is handled (and its audit put) before t.publish resolves: the revisions alternate.
    expect(seen).toEqual(["flags.dark=true@1", "flags.beta=false@3", "flags.dark=false@5"]);
    expect(t.published(kvSubject(bucket, "audit")).map((m) => m.value)).toEqual([
      { key: "flags.dark", revision: "1" },
      { key: "flags.beta", revision: "3" },
      { key: "flags.dark", revision: "5" },
    ]);
  });

  it("on the real server: the same, with the server's revisions", async () => {
    const bucket = uniqueName("flags").replaceAll(".", "_");
    made.streams.push(`KV_${bucket}`);
    const seen: string[] = [];
    const t = made.app(
      await TestApp.startLive(flagsApp(liveBroker(), bucket, seen), { withinMs: 20_000 }),
    );
    for (const [key, on] of [
      ["flags.dark", true],
      ["flags.beta", false],
      ["flags.dark", false],
    ] as const)
      await t.running.publish(kvSubject(bucket, key), on);
    await eventually(() => seen.length === 3, 10_000, "three puts handled");
    // The audit puts interleave with the flags' in the bucket, so the revisions depend on timing;
    // the flags' order and keys do not.
    expect(seen.map((s) => s.replace(/@\d+$/, ""))).toEqual([
      "flags.dark=true",
      "flags.beta=false",
      "flags.dark=false",
    ]);
    const revisions = seen.map((s) => Number(s.split("@")[1]));
    expect(revisions[0]).toBe(1);
    expect(revisions[1]).toBeGreaterThan(revisions[0] as number);
    expect(revisions[2]).toBeGreaterThan(revisions[1] as number);
  });
});
