// Redis streams: the app's publish and the broker's publisher against raw ioredis at the same
// concurrency, every row appending the same entry (the payload field, the content type and the
// partition key header, as the package writes them) to a fresh stream, each append's reply awaited.
//
//   raw ioredis XADD     one `xaddBuffer` promise per message, `depth` outstanding (a window)
//   ioredis pipeline     `depth` XADDs in one pipeline, its exec awaited, then the next `depth`
//   broker publisher     RedisPublish paired with a connected RedisBroker, `depth` outstanding
//   app.publish          a running RustStream app on RedisBroker, bytes codec, `depth` outstanding
import { bytes, HeaderMap, RustStream } from "@ruststream/core";
import { RedisBroker, RedisPublish } from "@ruststream/redis";
import { Redis } from "ioredis";
import { bytesContentType, keyOf, payloadOf } from "./message.js";
import { expectStored, type PublishRow } from "./row.js";
import { batched, type Timed, windowed } from "./window.js";

const broker = "Redis streams";
let streams = 0;
const freshStream = () => `bench:publish:${process.pid}:${streams++}`;

/** The fields the package writes for a bytes publish with a partition key, in its order. */
function fieldsOf(i: number): (string | Buffer)[] {
  return [
    "_payload",
    payloadOf(i),
    "h:content-type",
    bytesContentType,
    "h:redis-partition-key",
    keyOf(i),
  ];
}

/** A plain client set up as the package sets up its own: RESP2, no auto-pipelining. */
async function rawClient(url: string): Promise<Redis> {
  const client = new Redis(url, {
    protocol: 2,
    lazyConnect: true,
    maxRetriesPerRequest: null,
    enableAutoPipelining: false,
    connectionName: "bench-publish",
  });
  await client.connect();
  return client;
}

/** Runs `publish` onto a fresh stream, checks its length, deletes it. */
async function onFreshStream(
  url: string,
  row: string,
  count: number,
  publish: (stream: string) => Promise<Timed>,
): Promise<Timed> {
  const stream = freshStream();
  const timed = await publish(stream);
  const admin = await rawClient(url);
  try {
    expectStored(row, stream, await admin.xlen(stream), count);
    await admin.del(stream);
  } finally {
    admin.disconnect();
  }
  return timed;
}

export function redisRows(url: string): PublishRow[] {
  const raw = (
    name: string,
    run: (client: Redis, stream: string, count: number, depth: number) => Promise<Timed>,
  ): PublishRow => ({
    name,
    broker,
    baseline: true,
    run: (count, depth) =>
      onFreshStream(url, name, count, async (stream) => {
        const client = await rawClient(url);
        try {
          return await run(client, stream, count, depth);
        } finally {
          client.disconnect();
        }
      }),
  });
  return [
    raw("raw ioredis XADD", (client, stream, count, depth) =>
      windowed(count, depth, (i) => client.xaddBuffer(stream, "*", ...fieldsOf(i))),
    ),
    raw("ioredis pipeline", (client, stream, count, depth) =>
      batched(count, depth, async (from, to) => {
        const pipeline = client.pipeline();
        for (let i = from; i < to; i++) pipeline.xaddBuffer(stream, "*", ...fieldsOf(i));
        const results = await pipeline.exec();
        const failed = results?.find(([error]) => error !== null);
        if (results === null || failed !== undefined) {
          throw new Error(`pipeline XADD failed: ${failed?.[0]?.message ?? "exec returned nil"}`);
        }
      }),
    ),
    {
      name: "broker publisher",
      broker,
      baseline: false,
      run: (count, depth) =>
        onFreshStream(url, "broker publisher", count, async (stream) => {
          const connected = await new RedisBroker({ url }).connect();
          try {
            const publisher = await new RedisPublish().pair(connected);
            // The app's headers for a bytes publish; the publisher copies them, so one map serves all.
            const headers = new HeaderMap();
            headers.set("content-type", bytesContentType);
            return await windowed(count, depth, (i) =>
              publisher.publish({
                name: stream,
                payload: payloadOf(i),
                headers,
                partitionKey: keyOf(i),
              }),
            );
          } finally {
            await connected.shutdown();
          }
        }),
    },
    {
      name: "app.publish",
      broker,
      baseline: false,
      run: (count, depth) =>
        onFreshStream(url, "app.publish", count, async (stream) => {
          const app = new RustStream({ name: "bench-publish", version: "0" }).broker(
            new RedisBroker({ url }),
            () => {},
          );
          const running = await app.start();
          try {
            return await windowed(count, depth, (i) =>
              running.publish(stream, payloadOf(i), { codec: bytes, partitionKey: keyOf(i) }),
            );
          } finally {
            await running.stop();
          }
        }),
    },
  ];
}
