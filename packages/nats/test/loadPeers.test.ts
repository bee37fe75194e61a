import { isRustStreamError } from "@ruststream/core";
import { expect, it } from "vitest";
import { loadKv } from "../src/client/loadPeers.js";

// @nats-io/kv is an optional peer: a service without it that declares a bucket is told what to
// install. A real import of a package that is not installed stands for it (the workspace has
// @nats-io/kv itself).

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
