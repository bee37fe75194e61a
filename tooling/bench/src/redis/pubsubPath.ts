// The Pub/Sub consumer's own cost per message, without Redis: frames handed to the subscriber
// connection's listener 115 at a time (about one 64 KiB socket read), the event loop turning between
// reads, as ioredis does. `raw` is the raw loop's listener (take the payload, count it); `app` is
// the full app of main.ts on the package's in-process connection, its Pub/Sub link replaced by the
// feed, so the difference is what the package and the runtime add to each message.
//
//   node --conditions=@ruststream/source --import tsx src/redis/pubsubPath.ts app 3000000
import { bytes, RustStream, systemClock } from "@ruststream/core";
import { noCoordinator } from "@ruststream/core/broker";
import { type ConnectedRedisBroker, RedisBroker, RedisPubSub } from "@ruststream/redis";
import { frameOf, payloadOfFrame } from "./payload.js";

type Listener = (channel: string, message: Buffer) => void;

const [variant = "app", countArg = "3000000", roundsArg = "5"] = process.argv.slice(2);
if (variant !== "raw" && variant !== "app")
  throw new Error(`unknown variant "${variant}": raw or app`);
const count = Number(countArg);
const perRead = 115;
const frames = Array.from({ length: 512 }, (_, i) => frameOf(i));
const broker = new RedisBroker({ url: "redis://127.0.0.1:1" });
let received = 0;
let listener: Listener | undefined;

/** The in-process connection with its Pub/Sub link swapped for a capture of the listener. */
async function connectFed(options: object = {}): Promise<ConnectedRedisBroker> {
  const connected = await broker.connectInProcess({
    ...options,
    clock: systemClock,
    coordinator: noCoordinator,
  });
  (connected.link as { subscriber: unknown }).subscriber = async (
    _channel: string,
    _pattern: boolean,
    l: Listener,
  ) => {
    listener = l;
    return { close: async () => {} };
  };
  return connected;
}

if (variant === "raw") {
  await (await connectFed()).link.subscriber("bench", false, (_channel, message) => {
    // The link types its bytes as RedisBytes (no Node types in the package's API): a Buffer here.
    if (payloadOfFrame(message as Buffer).length > 0) received++;
  });
} else {
  const app = new RustStream({ name: "bench", version: "0" }).broker(broker, (b) => {
    b.subscriber(new RedisPubSub("bench"), { codec: bytes }).handle((payload) => {
      if (payload.length > 0) received++;
    });
  });
  await app.start({ connect: (_broker, options) => connectFed(options) });
}
const feed = listener;
if (feed === undefined) throw new Error("no subscriber connection was opened");
const turn = () => new Promise((resolve) => setImmediate(resolve));
for (let round = 0; round < Number(roundsArg); round++) {
  received = 0;
  const started = performance.now();
  for (let sent = 0; sent < count; ) {
    for (let i = 0; i < perRead; i++) feed("bench", frames[sent++ & 511]!);
    await turn();
  }
  while (received < count) await turn();
  console.log(
    `${variant}: ${(((performance.now() - started) * 1e6) / count).toFixed(1)} ns a message`,
  );
}
process.exit(0);
