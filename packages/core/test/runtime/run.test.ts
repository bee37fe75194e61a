import { describe, expect, test } from "vitest";
import { consoleLogger, MemoryBroker, RustStream } from "../../src/index.js";

function quietLogger(lines: string[]) {
  return consoleLogger({ write: (line) => lines.push(line) });
}

describe("run()", () => {
  test("serves until a signal, stops gracefully, answers exit code 0, with readable log lines", async () => {
    const lines: string[] = [];
    let handled = () => {};
    const done = new Promise<void>((resolve) => {
      handled = resolve;
    });
    const app = new RustStream({ name: "svc", version: "1.2.3" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("in").handle((_m, ctx) => {
          ctx.log.info({ n: 1 }, "handled");
          handled();
        });
      },
    );
    // The signal comes once the message was handled and run() listens (after startup), however
    // long either takes.
    app.afterStartup(async (running) => {
      await running.publish("in", 1);
      void (async () => {
        await done;
        while (process.listenerCount("SIGUSR2") === 0) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        process.emit("SIGUSR2", "SIGUSR2");
      })();
    });
    const code = await app.run({ exit: false, signals: ["SIGUSR2"], logger: quietLogger(lines) });
    expect(code).toBe(0);
    expect(lines.join("\n")).toMatch(/INFO {2}handled subscriber=in n=1/);
    expect(lines.join("\n")).toMatch(/stopping reason="signal SIGUSR2"/);
    expect(process.listenerCount("SIGUSR2")).toBe(0);
  });

  test("a fail-fast failure exits 1", async () => {
    const app = new RustStream({ name: "svc", version: "1" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("in")
        .onFailure({ error: "fail-fast" })
        .handle(() => {
          throw new Error("bug");
        });
    });
    app.afterStartup((running) => {
      void running.publish("in", 1);
    });
    expect(await app.run({ exit: false, signals: [], logger: quietLogger([]) })).toBe(1);
  });

  test("a startup failure exits 1 and leaves nothing connected", async () => {
    const app = new RustStream({ name: "svc", version: "1" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("in");
    });
    const lines: string[] = [];
    expect(await app.run({ exit: false, logger: quietLogger(lines) })).toBe(1);
    expect(lines.join("\n")).toMatch(/startup failed.*no handler/);
  });

  test("state moves from ready through stopping to stopped", async () => {
    const app = new RustStream({ name: "svc", version: "1" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("in").handle(() => {});
    });
    const running = await app.start();
    expect(running.state).toBe("ready");
    const stopping = running.stop();
    expect(running.state).toBe("stopping");
    await stopping;
    expect(running.state).toBe("stopped");
    expect(await running.stop()).toEqual(await stopping);
  });
});
