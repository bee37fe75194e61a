// The service under test, as a deployment runs it: app.run() (signals, drain, exit code) over the
// project's own broker packages. It prints one line per event the checker counts, written
// synchronously to the pipe before the handler returns, so a SIGKILL after the line and before the
// ack is a redelivery the checker sees as a duplicate, never a handling it misses:
//   h <key> <seq> <at> <n>    handled (the handler succeeded) at <at>, the machine's monotonic clock
//                             in µs (one clock for every process: it orders handlings across replicas),
//                             on attempt <n> (above 1 on core NATS: the runtime's republished copy)
//   r <key> <seq>             answered retryAfter (the retry plan's first attempt)
//   d <key> <seq> <write>     read from the dead letter: <write> names the write that put it there
import {
  consoleLogger,
  type HandlerContext,
  HeaderMap,
  type Outcome,
  RustStream,
  retryAfter,
  type SubscriberBuilder,
} from "@ruststream/core";
import { FileBroker, FileStream } from "@ruststream/file";
import { RedisBroker, RedisList, RedisStream } from "@ruststream/redis";
import { asBody } from "./body.js";
import { alwaysFails, delayedOnce, type ServiceConfig } from "./config.js";
import { mountPulsar } from "./pulsarService.js";

const raw = process.argv[2];
if (raw === undefined) throw new Error("usage: service/main.ts '<ServiceConfig as JSON>'");
const config = JSON.parse(raw) as ServiceConfig;

const line = (text: string): void => {
  process.stdout.write(`${text}\n`);
};
const work = (): Promise<void> =>
  config.workMs > 0
    ? new Promise((resolve) => setTimeout(resolve, config.workMs))
    : Promise.resolve();

const plan = config.retry;
const DEAD_LETTER_READS = 1_000;

type Handler = (message: unknown, ctx: HandlerContext) => Promise<Outcome | undefined>;

async function handleMain(message: unknown, ctx: HandlerContext): Promise<Outcome | undefined> {
  const body = asBody(message);
  await work();
  if (plan !== undefined && alwaysFails(plan, body.s))
    throw new Error(`seq ${body.s} always fails`);
  if (plan !== undefined && delayedOnce(plan, body.s) && ctx.attempt === 1) {
    line(`r ${body.k} ${body.s}`);
    return retryAfter(plan.delayMs);
  }
  line(`h ${body.k} ${body.s} ${process.hrtime.bigint() / 1000n} ${ctx.attempt}`);
  return undefined;
}

/**
 * Each dead letter the runtime writes carries a name of that one write (this process and a counter),
 * so the checker tells a dead letter read twice (its reader killed before the ack: the promised
 * redelivery) from one written twice (the bug the retry scenarios look for), on every broker. A
 * list's delivery position is the reader's own counter, which cannot tell the two apart. A dead
 * letter the broker moves carries none: its position in the dead letter names it there (a Redis
 * stream's entry id, a PostgreSQL row's id, kept by the move), or, on RabbitMQ, whose positions
 * count arrivals on a subscription, the server's record of the move (`x-death`: the queue, the
 * reason, the count and the moment of that one move, the same at every read).
 */
const DEAD_LETTER_WRITE = "chaos-dead-letter-write";
const SERVER_DEAD_LETTER_RECORD = "x-death";
let deadLetterWrites = 0;

function handleDeadLetter(message: unknown, ctx: HandlerContext): void {
  const body = asBody(message);
  const headers = ctx.delivery.headers;
  const write =
    headers.getString(DEAD_LETTER_WRITE) ??
    headers.getString(SERVER_DEAD_LETTER_RECORD) ??
    String(ctx.delivery.position);
  line(`d ${body.k} ${body.s} ${write}`);
}

/**
 * The stream's subscriber and, with a retry plan, its dead letter's: the same on every broker.
 * `handle` is the main handler where a broker's service wraps it (a RabbitMQ stream's stores the
 * offset it handled).
 */
function declare<S>(
  subscriber: (source: S) => SubscriberBuilder<unknown>,
  source: (key: string) => S,
  handle: Handler = handleMain,
): void {
  const main = subscriber(source(config.key));
  if (plan === undefined) {
    main.handle(handle);
    return;
  }
  if (plan.backoffMaxMs !== undefined) main.onFailure({ backoff: { maxMs: plan.backoffMaxMs } });
  if (plan.deadLetterBy === "broker") main.handle(handle);
  else main.maxAttempts(plan.maxAttempts).deadLetter(plan.deadLetter).handle(handle);
  // A dead-lettered copy carries its retry count, raised to the deliveries it had: under the
  // default cap its reader would give up on it before the handler ran.
  subscriber(source(plan.deadLetter)).maxAttempts(DEAD_LETTER_READS).handle(handleDeadLetter);
}

const app = new RustStream({ name: config.group, version: "1.0.0" });
app.use({
  publish: (message, next) => {
    if (message.deadLetterOrigin === undefined) return next(message);
    const headers = message.headers?.clone() ?? new HeaderMap();
    headers.set(DEAD_LETTER_WRITE, `${process.pid}.${++deadLetterWrites}`);
    return next({ ...message, headers });
  },
});
if (config.broker === "file") {
  const stream = (key: string) =>
    new FileStream(key, { consumer: config.group, start: "beginning" });
  app.broker(new FileBroker({ path: config.address, consumer: config.group }), (b) =>
    declare((source: FileStream) => b.subscriber(source), stream),
  );
} else if (config.broker === "pulsar-shared" || config.broker === "pulsar-key-shared") {
  mountPulsar(app, config, declare);
} else if (config.broker === "nats-jetstream") {
  // Each broker's client loaded only by its own replicas.
  (await import("./natsService.js")).mountNats(app, config, declare);
} else if (
  config.broker === "nats-core-request" ||
  config.broker === "nats-core-publish" ||
  config.broker === "nats-core-fanout"
) {
  (await import("./natsCoreService.js")).mountNatsCore(app, config, handleMain);
} else if (config.broker === "nats-partitioned") {
  (await import("./natsPartitionedService.js")).mountNatsPartitions(app, config, handleMain);
} else if (config.broker === "rabbitmq-quorum") {
  (await import("./rabbitmqService.js")).mountRabbit(app, config, declare);
} else if (config.broker === "rabbitmq-classic") {
  (await import("./rabbitmqQueueServices.js")).mountRabbitClassic(app, config, declare);
} else if (config.broker === "rabbitmq-stream") {
  (await import("./rabbitmqQueueServices.js")).mountRabbitStream(app, config, declare, handleMain);
} else if (config.broker === "postgres-queue") {
  (await import("./postgresService.js")).mountPostgres(app, config, declare, handleMain);
} else if (config.broker === "kafka-tracked" || config.broker === "kafka-transactional") {
  // Loaded only here: the file and Redis replicas never load the Kafka client.
  (await import("./kafkaService.js")).declareKafka(app, config, handleMain);
} else {
  // A reliable list: a value moves to `<key>.processing` while handled; a crashed holder's values
  // are recovered after recoveryIdleMs.
  const list = (key: string) =>
    new RedisList(key, { count: 32, blockMs: 500, recoveryIdleMs: 3000 });
  const stream = (key: string) =>
    new RedisStream(key, {
      group: config.group,
      count: 32,
      blockMs: 500,
      reclaimIdleMs: 3000,
      start: "beginning",
      ...(plan?.deadLetterBy === "broker" && key === config.key
        ? { retry: { maxAttempts: plan.maxAttempts, deadLetter: plan.deadLetter } }
        : {}),
    });
  app.broker(new RedisBroker({ url: config.address, group: config.group }), (b) =>
    config.broker === "redis-list"
      ? declare((source: RedisList) => b.subscriber(source), list)
      : declare((source: RedisStream) => b.subscriber(source), stream),
  );
}
app.afterStartup(() => line("ready"));
await app.run({ logger: consoleLogger({ level: "error" }) });
