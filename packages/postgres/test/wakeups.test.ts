import { setTimeout as sleep } from "node:timers/promises";
import type { Delivery } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  type ConnectedPostgresBroker,
  PostgresBroker,
  PostgresQueue,
  type PostgresQueueSubscription,
} from "../src/index.js";
import { queueTable } from "../src/table.js";
import { waitUntil } from "./support.js";

// The wake-ups of publishes on the real server: a publish outside a transaction commits its row
// without notifying and the connection sends the wake-up after, coalesced; a publish in the
// caller's transaction notifies in it, so only its commit wakes anyone. A settle that gives a row
// back (a delayed retry, a release) and a redrive share the publishes' wake-up the same way.

const table = "e2e_queue";
const channel = queueTable(table).channel;
const url = () => requireEnv("POSTGRES_URL");
/** Long enough that only a wake-up, never the poll, brings a row within the test. */
const pollMs = 20_000;

let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: url() });
  await sql.connect();
});
afterAll(() => sql.end());

/** The rows of `queue`, those that also match `condition` (SQL) where it is given. */
const rowsOf = async (queue: string, condition?: string) =>
  (
    await sql.query(
      `SELECT count(*)::int AS n FROM ${table} WHERE queue = $1${condition === undefined ? "" : ` AND ${condition}`}`,
      [queue],
    )
  ).rows[0].n;

/** A broker on the test's table; `applicationName` names its connections for `waitingForWake`. */
const connect = (applicationName?: string) =>
  new PostgresBroker({
    url: url(),
    table,
    ensureSchema: true,
    ...(applicationName === undefined ? {} : { applicationName }),
  }).connect();

/** The notifications of the table's channel, heard on a connection of the test's own. */
async function hear(): Promise<{
  readonly payloads: string[];
  /** The wake-ups for `queue` heard so far. */
  wakesFor(queue: string): string[];
  /** Sends `sentinel` on the channel and waits for it: everything committed before it is heard. */
  through(sentinel: string): Promise<void>;
  end(): Promise<void>;
}> {
  const listener = new pg.Client({ connectionString: url() });
  await listener.connect();
  const payloads: string[] = [];
  const waiting = new Map<string, () => void>();
  listener.on("notification", (n) => {
    if (n.channel !== channel) return;
    payloads.push(n.payload ?? "");
    waiting.get(n.payload ?? "")?.();
  });
  await listener.query(`LISTEN ${channel}`);
  return {
    payloads,
    wakesFor: (queue) => payloads.filter((p) => p === queue),
    through: async (sentinel) => {
      const heard = new Promise<void>((resolve) => waiting.set(sentinel, resolve));
      await sql.query("SELECT pg_notify($1, $2)", [channel, sentinel]);
      await heard;
    },
    end: () => listener.end(),
  };
}

/** Fails when `work` has not resolved within the subscription's poll interval. */
async function beforeThePoll<T>(work: Promise<T>, step: string): Promise<T> {
  const stop = new AbortController();
  const poll = sleep(pollMs, undefined, { signal: stop.signal }).then(
    () => {
      throw new Error(`${step}: not delivered within the poll interval (${pollMs} ms)`);
    },
    // Stopped once `work` won: the race is over.
    () => new Promise<never>(() => {}),
  );
  try {
    return await Promise.race([work, poll]);
  } finally {
    stop.abort();
  }
}

/** Waits until a pull of `applicationName`'s connection has looked and waits for a wake-up. */
async function waitingForWake(applicationName: string): Promise<void> {
  // Its last statement is the look for the next due row (none): then it waits.
  await waitUntil(10_000, "the pull waiting", async () => {
    const { rows } = await sql.query(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle' AND query LIKE 'SELECT EXTRACT(EPOCH%'",
      [applicationName],
    );
    return rows.length > 0;
  });
}

/**
 * A pull of one row from `queue` on `connected` (whose connections are named `applicationName`),
 * once it has looked and waits for a wake-up. The pull is in an object so that it is not awaited.
 */
async function waitingPull(
  connected: ConnectedPostgresBroker,
  applicationName: string,
  queue: string,
): Promise<{ subscription: PostgresQueueSubscription; pulled: Promise<readonly Delivery[]> }> {
  const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs }));
  const pulled = subscription.nextBatch(1);
  await waitingForWake(applicationName);
  return { subscription, pulled };
}

/**
 * The wake-ups for `queue` that `storm` sends on a broker of its own, counted with the table's
 * channel heard from before the broker connects until a sentinel after its shutdown (which sends
 * the wake-ups still pending before it closes the pool). The rows of `queue` are deleted when the
 * test ends.
 */
async function wakesOf(
  queue: string,
  storm: (connected: ConnectedPostgresBroker) => Promise<void>,
): Promise<number> {
  onTestFinished(async () => {
    await sql.query(`DELETE FROM ${table} WHERE queue = $1`, [queue]);
  });
  const heard = await hear();
  try {
    const connected = await connect();
    try {
      await storm(connected);
    } finally {
      await connected.shutdown();
    }
    await heard.through(`${queue}-end`);
    return heard.wakesFor(queue).length;
  } finally {
    await heard.end();
  }
}

describe("a publish outside a transaction", () => {
  it("wakes a waiting subscription well before its poll", async () => {
    const applicationName = uniqueName("wake-plain");
    const connected = await connect(applicationName);
    try {
      const queue = uniqueName("woken");
      const { subscription, pulled } = await waitingPull(connected, applicationName, queue);
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.publish({ name: queue, payload: bytes("wake") });
      const [delivery] = await beforeThePoll(pulled, "the published row");
      expect(text(delivery!.payload)).toBe("wake");
      await delivery!.ack();
      await subscription.close();
    } finally {
      await connected.shutdown();
    }
  });

  it("many at once send far fewer wake-ups than publishes", async () => {
    const queue = uniqueName("coalesced");
    const publishes = 200;
    const wakes = await wakesOf(queue, async (connected) => {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await Promise.all(
        Array.from({ length: publishes }, (_, i) =>
          publisher.publish({ name: queue, payload: bytes(`job-${i}`) }),
        ),
      );
    });
    expect(await rowsOf(queue)).toBe(publishes);
    expect(wakes).toBeGreaterThanOrEqual(1);
    expect(wakes).toBeLessThanOrEqual(publishes / 10);
  });
});

describe("a publish in the caller's transaction", () => {
  const applicationName = uniqueName("wake-tx");
  let connected: ConnectedPostgresBroker;
  beforeAll(async () => {
    connected = await connect(applicationName);
  });
  afterAll(() => connected.shutdown());

  it("wakes nobody before its commit, and the waiting subscription at it", async () => {
    const heard = await hear();
    const caller = new pg.Client({ connectionString: url() });
    await caller.connect();
    const queue = uniqueName("tx-wake");
    const { subscription, pulled } = await waitingPull(connected, applicationName, queue);
    try {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await caller.query("BEGIN");
      await publisher.publish({
        name: queue,
        payload: bytes("at-commit"),
        options: { transaction: caller },
      });
      // Every wake-up committed so far is heard before the sentinel: none for the open transaction.
      await heard.through(`${queue}-open`);
      expect(heard.wakesFor(queue)).toEqual([]);
      await caller.query("COMMIT");
      const [delivery] = await beforeThePoll(pulled, "the committed row");
      expect(text(delivery!.payload)).toBe("at-commit");
      await delivery!.ack();
      await heard.through(`${queue}-committed`);
      expect(heard.wakesFor(queue)).toEqual([queue]);
    } finally {
      await subscription.close();
      await caller.end();
      await heard.end();
    }
  });

  it("rolled back leaves no row, no wake-up and nothing delivered", async () => {
    const heard = await hear();
    const caller = new pg.Client({ connectionString: url() });
    await caller.connect();
    const queue = uniqueName("tx-rollback");
    const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs }));
    try {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await caller.query("BEGIN");
      await publisher.publish({
        name: queue,
        payload: bytes("rolled-back"),
        options: { transaction: caller },
      });
      await caller.query("ROLLBACK");
      await heard.through(`${queue}-rolled-back`);
      expect(heard.wakesFor(queue)).toEqual([]);
      expect(await rowsOf(queue)).toBe(0);
      // The next row the subscription gets is the sentinel published after.
      const pulled = subscription.nextBatch(1);
      await publisher.publish({ name: queue, payload: bytes("sentinel") });
      const [delivery] = await beforeThePoll(pulled, "the sentinel");
      expect(text(delivery!.payload)).toBe("sentinel");
      await delivery!.ack();
    } finally {
      await subscription.close();
      await caller.end();
      await heard.end();
    }
  });
});

describe("settles outside a transaction", () => {
  /** `count` rows published on `queue` by a broker of their own, shut down (its wake-ups sent). */
  async function published(queue: string, count: number): Promise<void> {
    const publishing = await connect();
    try {
      const publisher = await publishing.defaultPublishPolicy().pair(publishing);
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          publisher.publish({ name: queue, payload: bytes(`job-${i}`) }),
        ),
      );
    } finally {
      await publishing.shutdown();
    }
  }

  /** Claims `count` deliveries from `subscription`, batch after batch. */
  async function claimed(subscription: PostgresQueueSubscription, count: number) {
    const deliveries: Delivery[] = [];
    while (deliveries.length < count) {
      deliveries.push(...(await subscription.nextBatch(count - deliveries.length)));
    }
    return deliveries;
  }

  it("many delayed retries at once send far fewer wake-ups than settles", async () => {
    const queue = uniqueName("retry-storm");
    const settles = 100;
    await published(queue, settles);
    const wakes = await wakesOf(queue, async (connected) => {
      const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs }));
      const deliveries = await claimed(subscription, settles);
      // A delay of its own each: the subscription's settle batch sends one statement per delay.
      const answers = await Promise.all(deliveries.map((d, i) => d.nackAfter(600_000 + i)));
      expect(answers).toEqual(deliveries.map(() => "ok"));
      await subscription.close();
    });
    const later = await rowsOf(queue, "lease IS NULL AND run_at > now() + interval '5 minutes'");
    expect(later).toBe(settles);
    expect(wakes).toBeGreaterThanOrEqual(1);
    expect(wakes).toBeLessThanOrEqual(settles / 10);
  });

  it("many releases at once send far fewer wake-ups than settles", async () => {
    const queue = uniqueName("release-storm");
    const subscriptions = 40;
    await published(queue, subscriptions);
    const wakes = await wakesOf(queue, async (connected) => {
      // One row each: every subscription's release is a statement of its own. Claimed one after
      // another, so no claim finds the rows locked by another's.
      const held: { subscription: PostgresQueueSubscription; delivery: Delivery }[] = [];
      for (let i = 0; i < subscriptions; i++) {
        const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs }));
        const [delivery] = await claimed(subscription, 1);
        held.push({ subscription, delivery: delivery! });
      }
      const answers = await Promise.all(held.map((h) => h.delivery.nack({ requeue: true })));
      expect(answers).toEqual(held.map(() => "ok"));
      await Promise.all(held.map((h) => h.subscription.close()));
    });
    const free = await rowsOf(queue, "lease IS NULL AND done_at IS NULL");
    expect(free).toBe(subscriptions);
    expect(wakes).toBeGreaterThanOrEqual(1);
    expect(wakes).toBeLessThanOrEqual(subscriptions / 4);
  });

  it("a released row wakes another subscriber well before its poll", async () => {
    const queue = uniqueName("released");
    await published(queue, 1);
    const waiterName = uniqueName("wake-waiter");
    const holding = await connect();
    const waiting = await connect(waiterName);
    try {
      const holder = await holding.subscribe(new PostgresQueue(queue, { pollMs }));
      const [held] = await claimed(holder, 1);
      const { pulled } = await waitingPull(waiting, waiterName, queue);
      expect(await held!.nack({ requeue: true })).toBe("ok");
      const [delivery] = await beforeThePoll(pulled, "the released row");
      expect(text(delivery!.payload)).toBe("job-0");
      expect(delivery!.redeliveryCount).toBe(2);
      await delivery!.ack();
    } finally {
      await holding.shutdown();
      await waiting.shutdown();
    }
  });

  it("a row a shutdown gives back wakes another subscriber well before its poll", async () => {
    const queue = uniqueName("shutdown-released");
    await published(queue, 1);
    const waiterName = uniqueName("wake-waiter");
    const holding = await connect();
    const waiting = await connect(waiterName);
    try {
      const holder = await holding.subscribe(new PostgresQueue(queue, { pollMs }));
      await claimed(holder, 1);
      const { pulled } = await waitingPull(waiting, waiterName, queue);
      await holding.shutdown();
      const [delivery] = await beforeThePoll(pulled, "the row the shutdown gave back");
      expect(text(delivery!.payload)).toBe("job-0");
      await delivery!.ack();
    } finally {
      await waiting.shutdown();
    }
  });
});

describe("a redrive", () => {
  /** `count` dead letters in `deadLetter` from `source`, written by the test (no wake-up). */
  async function deadLetters(deadLetter: string, source: string, count: number): Promise<void> {
    await sql.query(
      `INSERT INTO ${table} (queue, payload, dead_source, dead_reason, dead_attempts)
       SELECT $1, convert_to('dead-' || i, 'UTF8'), $2, 'test', 3 FROM generate_series(1, $3::int) AS i`,
      [deadLetter, source, count],
    );
  }

  it("wakes a waiting subscription well before its poll, once, after its commit", async () => {
    const queue = uniqueName("redriven");
    const deadLetter = `${queue}.dead`;
    const count = 50;
    await deadLetters(deadLetter, queue, count);
    const heard = await hear();
    const waiterName = uniqueName("wake-waiter");
    const redriving = await connect();
    const waiting = await connect(waiterName);
    try {
      const { pulled } = await waitingPull(waiting, waiterName, queue);
      expect(await redriving.redrive(deadLetter)).toBe(count);
      // Nothing yet as the redrive resolves: its wake-up is a statement after its commit.
      expect(heard.wakesFor(queue)).toEqual([]);
      const [delivery] = await beforeThePoll(pulled, "a redriven row");
      expect(text(delivery!.payload)).toMatch(/^dead-\d+$/);
      expect(delivery!.redeliveryCount).toBe(1);
      await delivery!.ack();
      await heard.through(`${queue}-end`);
      expect(heard.wakesFor(queue)).toEqual([queue]);
      expect(await rowsOf(deadLetter)).toBe(0);
    } finally {
      await redriving.shutdown();
      await waiting.shutdown();
      await heard.end();
      await sql.query(`DELETE FROM ${table} WHERE queue = $1`, [queue]);
    }
  });

  it("many at once send far fewer wake-ups than redrives", async () => {
    const queue = uniqueName("redrive-storm");
    const redrives = 40;
    // A dead letter queue each, all from `queue`: every redrive is a statement of its own.
    const deadQueues = Array.from({ length: redrives }, (_, i) => `${queue}.dead-${i}`);
    for (const deadLetter of deadQueues) await deadLetters(deadLetter, queue, 1);
    const wakes = await wakesOf(queue, async (connected) => {
      const moved = await Promise.all(deadQueues.map((d) => connected.redrive(d)));
      expect(moved).toEqual(deadQueues.map(() => 1));
    });
    expect(await rowsOf(queue)).toBe(redrives);
    expect(wakes).toBeGreaterThanOrEqual(1);
    expect(wakes).toBeLessThanOrEqual(redrives / 4);
  });
});
