import { ManualClock } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import {
  type ConnectedNatsBroker,
  type KvBucket,
  type KvBucketDeclaration,
  type KvEntry,
  KvWatch,
  kvSubject,
  NatsKv,
  NatsPublish,
  type NatsReceipt,
} from "../src/index.js";
import type { openedPerTest } from "./targets.js";

// What the KV test files share: a bucket of a test's own, a put, and a key's entry in words.

/**
 * A connection, a bucket of its own (declared by a first watch, closed again), a publisher, and
 * the bucket's reads, deletes and purges (`kv`).
 */
export async function setUp(
  { connections, streams }: ReturnType<typeof openedPerTest>,
  connect: () => Promise<ConnectedNatsBroker>,
  history = 1,
  declare: KvBucketDeclaration = {},
) {
  const connected = await connect();
  connections.push(connected);
  const bucket = uniqueName("kv").replaceAll(".", "_");
  streams.push(`KV_${bucket}`);
  const declared = await connected.subscribe(
    new KvWatch(bucket, { declare: { history, storage: "memory", ...declare }, start: "new" }),
  );
  await declared.close();
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  const put = async (
    key: string,
    value: string,
    revision?: bigint | number,
    ttlMs?: number | "never",
  ) =>
    (
      (await publisher.publish({
        name: kvSubject(bucket, key),
        payload: bytes(value),
        options: {
          ...(revision === undefined ? {} : { expect: { lastSubjectSequence: revision } }),
          ...(ttlMs === undefined ? {} : { ttlMs }),
        },
      })) as NatsReceipt
    ).sequence;
  const kv = await new NatsKv(bucket).pair(connected);
  return { connected, bucket, put, kv };
}

/** A key's latest entry in words, or "missing". */
export async function read(kv: KvBucket, key: string): Promise<string> {
  const entry = await kv.get(key);
  return entry === undefined ? "missing" : shown(entry);
}

/**
 * An entry as `key=value@revision op` (no value on a marker): bytes (a put without a content-type)
 * as their text, a value its content-type's codec decoded as JSON.
 */
export function shown(entry: KvEntry): string {
  const value =
    entry.operation !== "put"
      ? ""
      : entry.value instanceof Uint8Array
        ? text(entry.value)
        : JSON.stringify(entry.value);
  return `${entry.key}=${value}@${entry.revision} ${entry.operation}`;
}

/** A value read back as its bytes: one put without a content-type (as `put` here sends it). */
export function bytesOf(value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array))
    throw new Error(`expected the value's bytes, got ${JSON.stringify(value)}`);
  return value;
}

/** Lets `ms` pass: the stand-in's clock is moved; the server's time passes on its own. */
export function letPass(connected: ConnectedNatsBroker, ms: number): void {
  if (connected.clock instanceof ManualClock) connected.clock.advance(ms);
}
