import { isRustStreamError } from "@ruststream/core";
import { expect, it } from "vitest";
import { loadKv, loadObj } from "../src/client/loadPeers.js";

// @nats-io/kv and @nats-io/obj are optional peers: a service without one that needs it is told
// what to install. A real import of a package that is not installed stands for it (the workspace
// has both).

it("a missing @nats-io/kv is refused naming the package and the fix", async () => {
  const missing = "@nats-io/kv-not-installed";
  const error = await loadKv(() => import(/* @vite-ignore */ missing)).catch((e: unknown) => e);
  expect(isRustStreamError(error, "unsupported"), String(error)).toBe(true);
  expect(String(error)).toContain("npm install @nats-io/kv");
  expect(String(error)).toContain("nats kv add");
});

it("the installed one loads", async () => {
  expect(typeof (await loadKv()).Kvm).toBe("function");
});

it("a missing @nats-io/obj is refused naming the package", async () => {
  const missing = "@nats-io/obj-not-installed";
  const error = await loadObj(() => import(/* @vite-ignore */ missing)).catch((e: unknown) => e);
  expect(isRustStreamError(error, "unsupported"), String(error)).toBe(true);
  expect(String(error)).toContain("an object store needs the package @nats-io/obj");
  expect(String(error)).toContain("npm install @nats-io/obj");
});
