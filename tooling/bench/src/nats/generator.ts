// The core NATS rows' publisher, in a process of its own (forked by main.ts with the server's URL):
// answers each fill request (credit.ts) and publishes orders 0..count-1 to the row's subject, at
// most `window` ahead of what the row reported handled. The payloads are made once and kept, so
// the generator spends its time publishing; it must outpace every row, or every row measures it.
//
//   forked with the server's URL for its only argument; "ready" over IPC once it listens.
import { connect } from "@nats-io/transport-node";
import { orderPayload } from "../redis/drain/order.js";
import { creditSubject, type FillRequest, fillSubject, window } from "./credit.js";

const nc = await connect({ servers: process.argv[2]!, name: "bench-nats-generator" });
const payloads: Buffer[] = [];
const payload = (i: number) => {
  while (payloads.length <= i) payloads.push(orderPayload(payloads.length));
  return payloads[i]!;
};

async function fill({ subject, count }: FillRequest): Promise<void> {
  let credited = 0;
  let wake: (() => void) | undefined;
  const credits = nc.subscribe(creditSubject(subject), {
    callback: (error, m) => {
      if (error !== null) return;
      credited = Math.max(credited, Number(m.string()));
      wake?.();
    },
  });
  await nc.flush();
  for (let i = 0; i < count; i++) {
    while (i - credited >= window) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    nc.publish(subject, payload(i));
  }
  await nc.flush();
  credits.unsubscribe();
}

nc.subscribe(fillSubject, {
  callback: (error, m) => {
    if (error !== null) return;
    const request = m.json<FillRequest>();
    m.respond("started");
    fill(request).catch((e: unknown) => {
      process.stderr.write(`generator: ${String(e)}\n`);
      process.exit(1);
    });
  },
});
await nc.flush();
process.send?.("ready");
const stop = async () => {
  await nc.close();
  process.exit();
};
process.on("message", stop);
// The bench gone (it failed, or was stopped) takes its generator with it.
process.on("disconnect", stop);
