import { join } from "node:path";
import { MemoryBroker, RustStream } from "@ruststream/core";
import { runtimeName } from "@ruststream/core/broker";
import { expect, test } from "vitest";
import { isRustStreamApp } from "../src/appGuard.js";
import { loadApp } from "../src/loadApp.js";
import { fixtures } from "./cli.js";

test("an app from another copy of core passes the guard, where instanceof fails", async () => {
  // loadApp imports through tsx into the runtime's own module graph; this test's core is vitest's
  // copy. On Bun and Deno, loadApp's plain import() (importFrom.ts) is one vitest's module runner
  // rewrites, so there the app is built on this test's copy and instanceof holds.
  const { app, exportName } = await loadApp(join(fixtures, "memoryApp.ts"));
  expect(exportName).toBe("app");
  expect(app instanceof RustStream).toBe(runtimeName() !== "node");
  expect(isRustStreamApp(app)).toBe(true);
  expect(app.info).toEqual({ name: "greeter", version: "2.0.0" });
  const [broker] = app.describe().brokers;
  expect(broker?.kind).toBe("memory");
  expect(broker?.subscribers.map((s) => s.name)).toEqual(["greetings"]);
});

test("the guard refuses what only looks like an app in part", () => {
  const app = new RustStream({ name: "here", version: "1.0.0" });
  expect(isRustStreamApp(app)).toBe(true);
  expect(isRustStreamApp(new MemoryBroker())).toBe(false);
  expect(isRustStreamApp({ info: { name: "x" } })).toBe(false);
  const { start: _start, ...withoutStart } = {
    info: app.info,
    broker: () => {},
    describe: () => {},
    start: () => {},
    use: () => {},
    observe: () => {},
  };
  expect(isRustStreamApp(withoutStart)).toBe(false);
  expect(isRustStreamApp(null)).toBe(false);
  expect(isRustStreamApp("app")).toBe(false);
});
