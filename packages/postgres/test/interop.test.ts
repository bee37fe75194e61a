import {
  bytes as bytesCodec,
  type HandlerContext,
  HeaderMap,
  RustStream,
  retry,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices, RustService } from "@ruststream/tooling-interop";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { PostgresBroker, PostgresQueue } from "../src/index.js";

// RustStream's own SQL broker (ruststream-sqlx 0.7.1, its inbox on Postgres; tooling/interop's
// `serve`) and ours on one queue table: the table our schema creates, described to the crate by a
// struct that gives our columns its roles (tooling/interop/src/postgres_service.rs). What is
// shared: the rows (the crate publishing through its own INSERT into our columns, ours consuming,
// and back), the lease (a row one side holds is not claimed by the other), the done mark. What
// differs, each shown here and listed in tooling/interop/README.md: the attempt's count (ours
// counts claims made from 0, the crate reads the count of the claim before its own), the
// headers (the crate's headers role is one column, ours two arrays), the priority's direction
// and the dead letter's origin columns.

const TABLE = "ruststream_interop";

let t: TestApp | undefined;
let admin: pg.Client;
beforeAll(async () => {
  admin = new pg.Client({ connectionString: url() });
  await admin.connect();
  // The table both sides use, created by ours (the crate creates none).
  const connected = await live().connect();
  await connected.shutdown();
});
afterAll(async () => {
  await admin.end();
});
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
});

function url(): string {
  return requireEnv("POSTGRES_URL");
}
const live = () => new PostgresBroker({ url: url(), table: TABLE, ensureSchema: true });

/** The rows of `queue` still in the table. */
async function rows(queue: string) {
  const result = await admin.query(
    `SELECT queue, attempts, done_at, locked_until, lease, dead_source FROM ${TABLE} WHERE queue = $1 ORDER BY id`,
    [queue],
  );
  return result.rows as {
    queue: string;
    attempts: number;
    done_at: Date | null;
    locked_until: Date | null;
    lease: string | null;
    dead_source: string | null;
  }[];
}

async function tsPublish(
  queue: string,
  sent: readonly {
    payload: string;
    headers?: [string, string][];
    key?: string;
    priority?: number;
  }[],
) {
  const connected = await live().connect();
  try {
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    for (const m of sent) {
      await publisher.publish({
        name: queue,
        payload: bytes(m.payload),
        headers: new HeaderMap(m.headers ?? []),
        ...(m.key === undefined ? {} : { partitionKey: bytes(m.key) }),
        ...(m.priority === undefined ? {} : { options: { priority: m.priority } }),
      });
    }
  } finally {
    await connected.shutdown();
  }
}

function rustConsumer(
  queue: string,
  options: { maxAttempts?: number; deadLetter?: string; hold?: boolean } = {},
) {
  return RustService.start({
    transport: "postgres",
    url: url(),
    consume: {
      key: queue,
      max_attempts: options.maxAttempts ?? 3,
      dead_letter: options.deadLetter ?? `${queue}-dlq`,
      ...(options.hold === undefined ? {} : { hold: options.hold }),
    },
  });
}

/** What one of our handlers saw. */
interface Seen {
  readonly payload: string;
  readonly headers: [string, string][];
  readonly key: string | undefined;
  readonly attempt: number;
}

async function tsConsumer(
  queue: string,
  seen: Seen[],
  options: { fail?: string; deadLetter?: string; hold?: string; maxAttempts?: number } = {},
) {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
    const sub = b.subscriber(new PostgresQueue(queue, { pollMs: 50 }), { codec: bytesCodec });
    const capped =
      options.deadLetter === undefined
        ? sub.maxAttempts(options.maxAttempts ?? 3)
        : sub.maxAttempts(options.maxAttempts ?? 3).deadLetter(options.deadLetter);
    capped.handle(async (payload: Uint8Array, ctx: HandlerContext) => {
      seen.push({
        payload: text(payload),
        headers: [...ctx.headers.entries()].map(([n, v]) => [n, Buffer.from(v).toString()]),
        key: ctx.delivery.partitionKey === undefined ? undefined : text(ctx.delivery.partitionKey),
        attempt: ctx.attempt,
      });
      if (text(payload) === options.hold) await held;
      return text(payload) === options.fail ? retry() : undefined;
    });
  });
  t = await TestApp.startLive(app);
  return release;
}

interopSuite(
  "RustStream's SQL broker and ours on one queue table",
  () => {
    it("ours publishes, the crate consumes: the payloads in order, its ack marking the rows done; our headers are not in its map", async () => {
      const queue = uniqueName("pg-to-rust");
      await tsPublish(queue, [
        { payload: "one", headers: [["x-trace", "t-9"]], key: "k-1" },
        { payload: "two" },
      ]);
      const rust = await rustConsumer(queue);
      await rust.waitForDeliveries(2);
      expect(rust.deliveries.map((d) => [text(d.payload), d.outcome])).toEqual([
        ["one", "ack"],
        ["two", "ack"],
      ]);
      // The crate's headers role is one column of its own type (a JSON map, or a HeaderColumn):
      // our two arrays are no such column, so the crate's handler sees no header of ours.
      expect(rust.deliveries[0]!.headers).toEqual([]);
      // The attempt the crate reads is the column as its claim found it, before the claim's own
      // increment: 0 on our rows (ours counts claims made, from 0; the crate's tables start at 1).
      expect(rust.deliveries.map((d) => d.attempt)).toEqual([0, 0]);
      // With `done_at` as its processed_at role the crate's ack marks the row (ours deletes it
      // unless `ack: "keep"`; our retention sweep removes marked rows): counted by the claim, freed.
      await expect
        .poll(
          async () =>
            (await rows(queue)).map((r) => [r.attempts, r.done_at !== null, r.locked_until]),
          {
            timeout: 5000,
          },
        )
        .toEqual([
          [1, true, null],
          [1, true, null],
        ]);
    });

    it("the crate publishes, ours consumes: the payloads through its INSERT, our first attempt; a header the crate cannot: its table has no headers column", async () => {
      const queue = uniqueName("pg-to-ts");
      const rust = await RustService.start({ transport: "postgres", url: url() });
      await rust.publish(
        { key: queue, payload: bytes("one") },
        { key: queue, payload: bytes("two") },
      );
      // The crate refuses a header its row cannot hold byte for byte before the INSERT runs; a
      // struct over our table has no headers column (ours are two arrays, the crate's role is one
      // column), so every header, the key's carrier included, is refused.
      await expect(
        rust.publish({ key: queue, payload: bytes("three"), headers: [["x-trace", "t-9"]] }),
      ).rejects.toThrow(/cannot hold header `x-trace` byte for byte/);
      const seen: Seen[] = [];
      await tsConsumer(queue, seen);
      await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(2);
      expect(seen).toEqual([
        { payload: "one", headers: [], key: undefined, attempt: 1 },
        { payload: "two", headers: [], key: undefined, attempt: 1 },
      ]);
      await expect.poll(() => rows(queue), { timeout: 5000 }).toEqual([]);
    });

    it("a row the crate holds under its lease is not claimed by ours, and a row ours holds is not claimed by the crate", async () => {
      const queue = uniqueName("pg-lease");
      await tsPublish(queue, [{ payload: "held-by-rust" }]);
      const rust = await rustConsumer(queue, { hold: true });
      await rust.waitForDeliveries(1);
      // The crate's lease: locked_until set, our lease id not.
      const [leased] = await rows(queue);
      expect(leased!.locked_until).not.toBeNull();
      expect(leased!.lease).toBeNull();
      // Ours claims in id order: the sentinel behind it is handled, the held row is not.
      const seen: Seen[] = [];
      await tsConsumer(queue, seen);
      await tsPublish(queue, [{ payload: "sentinel-1" }]);
      await expect
        .poll(() => seen.map((s) => s.payload), { timeout: 10_000 })
        .toEqual(["sentinel-1"]);
      await rust.kill();
      await t!.stop();
      t = undefined;

      const other = uniqueName("pg-lease-ts");
      const mine: Seen[] = [];
      const release = await tsConsumer(other, mine, { hold: "held-by-ts" });
      await tsPublish(other, [{ payload: "held-by-ts" }]);
      await expect.poll(() => mine.length, { timeout: 10_000 }).toBe(1);
      const reader = await rustConsumer(other);
      await tsPublish(other, [{ payload: "sentinel-2" }]);
      // The crate claims in id order too (after its priority and run_at): it would take the held
      // row first were it free.
      await reader.waitFor("the sentinel", (d) => d.some((x) => text(x.payload) === "sentinel-2"));
      expect(reader.deliveries.map((d) => text(d.payload))).toEqual(["sentinel-2"]);
      release();
      // Our ack deletes the held row; the crate's marked its sentinel done.
      await expect
        .poll(async () => (await rows(other)).map((r) => r.done_at !== null), { timeout: 5000 })
        .toEqual([true]);
    });

    it("priority: ours claims the higher first, the crate the lower first", async () => {
      const queue = uniqueName("pg-priority");
      const order = [
        { payload: "low", priority: 0 },
        { payload: "high", priority: 5 },
      ];
      await tsPublish(queue, order);
      const rust = await rustConsumer(queue);
      await rust.waitForDeliveries(2);
      expect(rust.deliveries.map((d) => text(d.payload))).toEqual(["low", "high"]);

      const again = uniqueName("pg-priority-ts");
      await tsPublish(again, order);
      const seen: Seen[] = [];
      await tsConsumer(again, seen);
      await expect
        .poll(() => seen.map((s) => s.payload), { timeout: 10_000 })
        .toEqual(["high", "low"]);
    });

    it("a row that always fails in the crate: its attempts as each side counts them, and its dead letter as ours reads it", async () => {
      const queue = uniqueName("pg-dlq-r");
      const dlq = `${queue}-dlq`;
      await tsPublish(queue, [{ payload: "always-fails", headers: [["x-trace", "t-9"]] }]);
      const rust = await rustConsumer(queue, { maxAttempts: 3, deadLetter: dlq });
      await rust.failOn(["always-fails"]);
      await expect.poll(async () => (await rows(dlq)).length, { timeout: 20_000 }).toBe(1);
      expect(rust.deliveries.map((d) => [d.attempt, d.outcome])).toEqual([
        [0, "retry"],
        [1, "retry"],
        [2, "retry"],
        [3, "retry"],
      ]);
      // The crate's dead letter moves the row to the dead-letter group and frees it: no origin
      // columns, its attempts kept.
      expect(await rows(dlq)).toEqual([
        {
          queue: dlq,
          attempts: 4,
          done_at: null,
          locked_until: null,
          lease: null,
          dead_source: null,
        },
      ]);
      const seen: Seen[] = [];
      // Ours counts on from the kept attempts: the reader's cap has to be above them.
      await tsConsumer(dlq, seen, { maxAttempts: 10 });
      await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(1);
      expect(seen[0]).toEqual({
        payload: "always-fails",
        headers: [["x-trace", "t-9"]],
        key: undefined,
        attempt: 5,
      });
    });

    it("a row that always fails in ours: our dead letter's origin columns, which the crate does not read, and its attempt from 0 again", async () => {
      const queue = uniqueName("pg-dlq-t");
      const dlq = `${queue}-dlq`;
      const seen: Seen[] = [];
      await tsConsumer(queue, seen, { fail: "always-fails", deadLetter: dlq });
      await tsPublish(queue, [{ payload: "always-fails" }]);
      await expect.poll(async () => (await rows(dlq)).length, { timeout: 20_000 }).toBe(1);
      expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
      expect(await rows(dlq)).toEqual([
        {
          queue: dlq,
          attempts: 0,
          done_at: null,
          locked_until: null,
          lease: null,
          dead_source: queue,
        },
      ]);
      const reader = await rustConsumer(dlq);
      await reader.waitForDeliveries(1);
      expect(reader.deliveries.map((d) => [text(d.payload), d.attempt, d.outcome])).toEqual([
        ["always-fails", 0, "ack"],
      ]);
      await expect
        .poll(async () => (await rows(dlq)).map((r) => r.done_at !== null), { timeout: 5000 })
        .toEqual([true]);
    });
  },
  { timeout: 120_000 },
);
