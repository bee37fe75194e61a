import { createServer } from "node:net";
import { isRustStreamError } from "@ruststream/core";
import { expect, test } from "vitest";
import { serveHttp } from "../src/index.js";

const routes = {
  "/a": () => ({ status: 200, contentType: "text/plain", body: "a\n" }),
  "/b": async () => ({ status: 503, contentType: "application/json", body: '{"b":1}' }),
  "/broken": () => {
    throw new Error("route exploded");
  },
};

test("serves each route by path, on 127.0.0.1 and a free port", async () => {
  const server = await serveHttp({ port: 0, routes });
  try {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const a = await fetch(`${server.url}/a?ignored=1`);
    expect([a.status, a.headers.get("content-type"), await a.text()]).toEqual([
      200,
      "text/plain",
      "a\n",
    ]);
    const b = await fetch(`${server.url}/b`);
    expect([b.status, await b.json()]).toEqual([503, { b: 1 }]);
    const head = await fetch(`${server.url}/a`, { method: "HEAD" });
    expect([head.status, head.headers.get("content-length"), await head.text()]).toEqual([
      200,
      "2",
      "",
    ]);
    const missing = await fetch(`${server.url}/metrics`);
    expect([missing.status, await missing.text()]).toEqual([
      404,
      "no endpoint at /metrics; this server has /a, /b, /broken\n",
    ]);
    const post = await fetch(`${server.url}/a`, { method: "POST" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    const broken = await fetch(`${server.url}/broken`);
    expect([broken.status, await broken.text()]).toEqual([500, "/broken failed: route exploded\n"]);
  } finally {
    await server.close();
  }
  await expect(fetch(`${server.url}/a`)).rejects.toThrow();
});

test("a port in use is refused with the fix", async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  const port = (taken.address() as { port: number }).port;
  try {
    const error = await serveHttp({ port, routes }).catch((e: unknown) => e);
    expect(isRustStreamError(error, "invalid-argument")).toBe(true);
    expect(String(error)).toMatch(
      /could not listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\): pick another port/,
    );
  } finally {
    taken.close();
  }
  await expect(serveHttp({ port: 70_000, routes })).rejects.toThrow(/from 0 to 65535/);
});
