// running.publisher(broker): messages already encoded, sent through the app's publish path (its
// middleware, then a publish event); and running.onStopping(task): work on the app's connections
// that the stop waits for before it closes them.
import { describe, expect, test } from "vitest";
import {
  bytes,
  consoleLogger,
  HeaderMap,
  MemoryBroker,
  type PublishEvent,
  type RuntimeEvent,
  RustStream,
  RustStreamError,
} from "../../src/index.js";
import { startInProcess } from "./harness.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function lines(into: string[]) {
  return consoleLogger({ write: (line) => into.push(line) });
}

describe("running.publisher(broker)", () => {
  test("sends the message as given, through the app's publish middleware and its publish event", async () => {
    const received: { payload: string; headers: Record<string, string> }[] = [];
    const told: string[] = [];
    const second = new MemoryBroker();
    const app = new RustStream({ name: "relay", version: "0.0.0" })
      .broker(new MemoryBroker())
      .broker(second, (b) => {
        b.subscriber("events", { codec: bytes }).handle((payload, ctx) => {
          received.push({
            payload: decoder.decode(payload as Uint8Array),
            headers: Object.fromEntries(
              [...ctx.delivery.headers].map(([n, v]) => [n, decoder.decode(v)]),
            ),
          });
        });
      })
      .use({
        publish: (message, next, info) => {
          told.push(`${info.broker} ${info.purpose}`);
          const headers = message.headers?.clone() ?? new HeaderMap();
          headers.set("x-added", "by middleware");
          return next({ ...message, headers });
        },
      });
    const h = await startInProcess(app);
    const headers = new HeaderMap();
    headers.set("x-carried", "as written");
    const receipt = await h.running.publisher(second).publish({
      name: "events",
      payload: encoder.encode("raw bytes, no codec"),
      headers,
    });
    await h.quiet();
    expect(receipt.name).toBe("events");
    expect(told).toEqual(["memory app"]);
    // No content type of a codec: the bytes and headers are the caller's, plus the middleware's.
    expect(received).toEqual([
      {
        payload: "raw bytes, no codec",
        headers: { "x-carried": "as written", "x-added": "by middleware" },
      },
    ]);
    const published = h.events.filter((e): e is PublishEvent => e.type === "publish");
    expect(published.map((e) => [e.name, e.broker, e.purpose, e.ok])).toEqual([
      ["events", "memory-2", "app", true],
    ]);
    expect(published[0]?.message.headers?.getString("x-added")).toBe("by middleware");
    await h.running.stop();
  });

  test("rejects with closed once the app stopped, and refuses a broker the app does not have", async () => {
    const app = new RustStream({ name: "relay", version: "0.0.0" }).broker(new MemoryBroker());
    const h = await startInProcess(app);
    const publisher = h.running.publisher();
    expect(() => h.running.publisher(new MemoryBroker())).toThrow(/not registered with this app/);
    await h.running.stop();
    const late = publisher.publish({ name: "x", payload: new Uint8Array() });
    await expect(late).rejects.toBeInstanceOf(RustStreamError);
    await expect(late).rejects.toMatchObject({ code: "closed" });
    expect(() => h.running.publisher()).toThrow(/has stopped/);
  });
});

describe("running.onStopping(task)", () => {
  test("the stop runs the task and waits for it before the connections close", async () => {
    const steps: string[] = [];
    const broker = new MemoryBroker();
    const app = new RustStream({ name: "relay", version: "0.0.0" })
      .broker(broker, (b) => {
        b.subscriber("last", { codec: bytes }).handle(() => {});
      })
      .afterStartup((running) => {
        const publisher = running.publisher(broker);
        running.onStopping(async () => {
          steps.push(`task begins, app ${running.state}`);
          // Slower than the rest of the stop (no handler runs), which would close the connection
          // under the publish if the stop did not wait for the task.
          await new Promise((resolve) => setTimeout(resolve, 20));
          // A publish on the app's connection in the middle of its stop: it is still open.
          await publisher.publish({ name: "last", payload: encoder.encode("in flight") });
          steps.push("task published");
        });
      });
    app.observe((e: RuntimeEvent) => {
      if (e.type === "app-state" && e.state === "stopping") steps.push("app stopping");
      if (e.type === "broker-connection" && e.state === "closed") steps.push("connection closed");
      if (e.type === "publish") steps.push(`publish ${e.name} ${e.ok ? "ok" : "failed"}`);
    });
    const running = await app.start();
    running.stopped.then(() => steps.push("stopped"));
    await running.stop();
    expect(steps).toEqual([
      "app stopping",
      "task begins, app stopping",
      "publish last ok",
      "task published",
      "connection closed",
      "stopped",
    ]);
  });

  test("a task that throws is logged and the stop goes on; one past the timeout is left behind", async () => {
    const logged: string[] = [];
    const app = new RustStream({
      name: "relay",
      version: "0.0.0",
      shutdownTimeoutMs: 50,
    }).broker(new MemoryBroker());
    const running = await app.start({ logger: lines(logged) });
    running.onStopping(() => {
      throw new Error("the task broke");
    });
    // Never settles: the stop waits for it the shutdown timeout, then closes the connections.
    running.onStopping(() => new Promise<void>(() => {}));
    const report = await running.stop();
    expect(report.failed).toBe(false);
    expect(running.state).toBe("stopped");
    expect(logged.some((l) => l.includes("an onStopping task failed"))).toBe(true);
    expect(logged.some((l) => l.includes("onStopping tasks still running"))).toBe(true);
  });

  test("added while the app stops, it runs at once and is waited for; after the stop it is refused", async () => {
    const steps: string[] = [];
    let running: Awaited<ReturnType<RustStream["start"]>> | undefined;
    const app = new RustStream({ name: "relay", version: "0.0.0" }).broker(new MemoryBroker());
    app.observe((e) => {
      if (e.type === "app-state" && e.state === "stopping") {
        running?.onStopping(async () => {
          steps.push("late task begins");
          await new Promise((resolve) => setImmediate(resolve));
          steps.push("late task ends");
        });
      }
      if (e.type === "broker-connection" && e.state === "closed") steps.push("connection closed");
    });
    running = await app.start();
    await running.stop();
    expect(steps).toEqual(["late task begins", "late task ends", "connection closed"]);
    expect(() => running?.onStopping(() => {})).toThrow(/has stopped/);
    expect(() => running?.onStopping(undefined as unknown as () => void)).toThrow(
      /needs a function/,
    );
  });
});
