// The `app.publish` row as the NATS, RabbitMQ and PostgreSQL tables run it: a running RustStream app
// on the broker, the bytes codec, the message's partition key, `depth` outstanding, onto the fresh
// name the table's `onFresh` makes, checks and removes.
import { bytes, RustStream } from "@ruststream/core";
import { keyOf, payloadOf } from "./message.js";
import type { PublishRow } from "./row.js";
import { type Timed, windowed } from "./window.js";

export type OnFresh = (
  row: string,
  count: number,
  publish: (name: string) => Promise<Timed>,
) => Promise<Timed>;

export function appPublishRow(
  table: string,
  /** Registers the broker on the app: `(app) => app.broker(new NatsBroker(...))`. */
  withBroker: (app: RustStream) => RustStream,
  onFresh: OnFresh,
  /** The row's name: another than "app.publish" for the package as an earlier commit had it. */
  rowName = "app.publish",
): PublishRow {
  return {
    name: rowName,
    broker: table,
    baseline: false,
    run: (count, depth) =>
      onFresh(rowName, count, async (name) => {
        const app = withBroker(new RustStream({ name: "bench-publish", version: "0" }));
        const running = await app.start();
        try {
          return await windowed(count, depth, (i) =>
            running.publish(name, payloadOf(i), { codec: bytes, partitionKey: keyOf(i) }),
          );
        } finally {
          await running.stop();
        }
      }),
  };
}
