// NATS JetStream: the app's publish (NatsBroker with `publish: { jetStream: true }`, each publish
// resolving on the stream's acknowledgement) against @nats-io/jetstream's `js.publish` with the
// same headers the package writes (the content type and `nats-partition-key`), `depth`
// outstanding, onto a fresh stream (file storage) per run, its message count checked after.
// Core NATS publishes have no receipt (the package's resolve on a flush), so they are not here.
import { jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect, headers } from "@nats-io/transport-node";
import { NatsBroker } from "@ruststream/nats";
import { appPublishRow, type OnFresh } from "./appRow.js";
import { bytesContentType, keyOf, payloadOf } from "./message.js";
import { expectStored, type PublishRow } from "./row.js";
import { windowed } from "./window.js";

const table = "NATS JetStream";
let streams = 0;

export function natsRows(url: string): PublishRow[] {
  // The stream made and checked on a connection of its own, closed after, as the other tables do.
  const onFresh: OnFresh = async (row, count, publish) => {
    const admin = await connect({ servers: url, name: "bench-publish-admin" });
    const jsm = await jetstreamManager(admin);
    const n = streams++;
    const subject = `bench.publish.${process.pid}.${n}`;
    const stream = `BENCH_PUBLISH_${process.pid}_${n}`;
    await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.File });
    const timed = await publish(subject);
    expectStored(row, stream, (await jsm.streams.info(stream)).state.messages, count);
    await jsm.streams.delete(stream);
    await admin.close();
    return timed;
  };
  return [
    {
      name: "raw js.publish",
      broker: table,
      baseline: true,
      run: (count, depth) =>
        onFresh("raw js.publish", count, async (subject) => {
          const nc = await connect({ servers: url, name: "bench-publish" });
          try {
            const js = jetstream(nc);
            return await windowed(count, depth, (i) => {
              const h = headers();
              h.set("content-type", bytesContentType);
              h.set("nats-partition-key", keyOf(i));
              return js.publish(subject, payloadOf(i), { headers: h });
            });
          } finally {
            await nc.close();
          }
        }),
    },
    appPublishRow(
      table,
      (app) => app.broker(new NatsBroker({ servers: url, publish: { jetStream: true } })),
      onFresh,
    ),
  ];
}
