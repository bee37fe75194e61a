// An app over wss:// (NATS_WSS_URL, whose certificate the tooling's test CA signed), for
// test/websocket.test.ts: a process of its own, as Node reads NODE_EXTRA_CA_CERTS once, when the
// process starts. A handler of `<prefix>.ping` publishes to `<prefix>.pong`, whose handler ends
// the round trip; it prints "round trip: <what came back>", or, when connecting is refused,
// "refused: <the error>" and exits with 2.
import { isRustStreamError, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv } from "@ruststream/tooling-testkit";
import { NatsBroker } from "../../src/index.js";

const prefix = process.argv[2];
if (prefix === undefined) throw new Error("give a subject prefix");

let backHome: (text: string) => void = () => {};
const back = new Promise<string>((resolve) => {
  backHome = resolve;
});
const app = new RustStream({ name: "wss-echo", version: "1.0.0" }).broker(
  new NatsBroker({ servers: requireEnv("NATS_WSS_URL"), maxReconnectAttempts: 0 }),
  (b) => {
    b.subscriber<string>(`${prefix}.ping`)
      .publishes({ pong: `${prefix}.pong` })
      .handle(async (ping, ctx) => {
        await ctx.out.pong.publish(`${ping}, answered`);
      });
    b.subscriber<string>(`${prefix}.pong`).handle(async (pong) => {
      backHome(pong);
    });
  },
);

let t: TestApp;
try {
  t = await TestApp.startLive(app, { withinMs: 10_000 });
} catch (error) {
  const code = isRustStreamError(error, "broker-failure") ? "broker-failure" : "other";
  process.stdout.write(`refused: ${code}: ${String(error)}\n`);
  process.exit(2);
}
try {
  await t.running.publish(`${prefix}.ping`, "ping");
  process.stdout.write(`round trip: ${await back}\n`);
} finally {
  await t.stop();
}
