// The load generator, in its own process so its CPU is never the measured consumer's: fills a
// stream or list before a row runs, or publishes while the row's consumer is subscribed.
//
//   forked by main.ts with the target in BENCH_REDIS_TARGET; speaks protocol.ts over IPC. On a
//   cluster it fills streams only (each fill is one key, so one node).
import { orderPayload } from "./drain/order.js";
import { frameOf, payloadOf } from "./payload.js";
import type { GeneratorCommand, GeneratorReply } from "./protocol.js";
import { RespPublisher } from "./respPublisher.js";
import { openRaw, type Target } from "./target.js";

// Commands per pipeline: large enough that a fill is bound by the server, small enough that the
// client never buffers megabytes.
const chunk = 1000;

const targetText = process.env.BENCH_REDIS_TARGET;
if (targetText === undefined) throw new Error("generator: BENCH_REDIS_TARGET is not set");
const target = JSON.parse(targetText) as Target;
const client = await openRaw(target, "generator");
const publisher = target.kind === "server" ? await RespPublisher.open(target.url) : undefined;

function reply(message: GeneratorReply): void {
  process.send?.(message);
}

async function fillStream(
  key: string,
  count: number,
  payload: (sequence: number) => Buffer = payloadOf,
): Promise<void> {
  for (let at = 0; at < count; at += chunk) {
    const pipeline = client.pipeline();
    for (let i = at; i < Math.min(count, at + chunk); i++) {
      pipeline.xadd(key, "*", "_payload", payload(i));
    }
    await pipeline.exec();
  }
}

async function fillList(key: string, count: number): Promise<void> {
  for (let at = 0; at < count; at += chunk) {
    const values: Buffer[] = [];
    for (let i = at; i < Math.min(count, at + chunk); i++) values.push(frameOf(i));
    // LPUSH of many values in order: the first pushed is the first BLMOVE ... RIGHT takes.
    await client.lpush(key, ...values);
  }
}

// Credit from the consumer: publishing waits whenever it is `window` messages ahead.
let received = 0;
let creditArrived: (() => void) | undefined;
const waitCredit = () =>
  new Promise<void>((resolve) => {
    creditArrived = resolve;
  });

process.on("message", (command: GeneratorCommand) => {
  if (command.kind === "credit") {
    received = command.received;
    const wake = creditArrived;
    creditArrived = undefined;
    wake?.();
    return;
  }
  if (command.kind === "exit") {
    client.disconnect();
    publisher?.close();
    process.disconnect();
    return;
  }
  // Credit counts from zero for each publish.
  if (command.kind === "publish") received = 0;
  const began = performance.now();
  const work =
    command.kind === "fill-stream"
      ? fillStream(command.key, command.count)
      : command.kind === "fill-stream-orders"
        ? fillStream(command.key, command.count, orderPayload)
        : command.kind === "fill-list"
          ? fillList(command.key, command.count)
          : publisher === undefined
            ? Promise.reject(new Error("publishing runs on one server only"))
            : publisher.publish(
                command.channel,
                command.count,
                command.window,
                () => received,
                waitCredit,
              );
  work.then(
    () => reply({ kind: "done", ms: performance.now() - began }),
    (error: unknown) => reply({ kind: "failed", message: String(error) }),
  );
});

reply({ kind: "ready" });
