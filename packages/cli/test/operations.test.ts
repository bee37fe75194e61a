import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { fixtures, packageRoot, startCli } from "./cli.js";

const dir = mkdtempSync(join(tmpdir(), "cli-operations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function get(url: string): Promise<{ status: number; body: string; type: string | null }> {
  const response = await fetch(url);
  return {
    status: response.status,
    body: await response.text(),
    type: response.headers.get("content-type"),
  };
}

/** The operations server's address, from the line the CLI logs when it listens. */
const servingLine = /INFO {2}serving operations (?:worker=(\d) )?url=(http:\/\/127\.0\.0\.1:\d+)/;

test("--http-port: health answers while the app starts (not ready), ready once it runs, on 127.0.0.1", async () => {
  const gate = join(dir, "gate");
  const cli = startCli(["run", join(fixtures, "gatedStart.ts"), "--http-port", "0"], {
    env: { GATE_FILE: gate },
  });
  const url = (await cli.waitFor(servingLine))[2]!;
  expect(cli.stderr()).toMatch(/paths="\/health\/live,\/health\/ready"/);

  const live = await get(`${url}/health/live`);
  expect(live.status).toBe(200);
  const starting = await get(`${url}/health/ready`);
  expect(starting.status).toBe(503);
  expect(JSON.parse(starting.body)).toMatchObject({ ready: false, state: "starting" });
  expect((await get(`${url}/metrics`)).status).toBe(404);

  writeFileSync(gate, "");
  await cli.waitFor(/INFO {2}ready app=gated/);
  const ready = await get(`${url}/health/ready`);
  expect(ready.status).toBe(200);
  expect(JSON.parse(ready.body)).toMatchObject({ ready: true, state: "ready" });

  cli.signal("SIGTERM");
  expect((await cli.exited).code).toBe(0);
  // Closed with the app.
  await expect(fetch(`${url}/health/live`)).rejects.toThrow();
});

test("--metrics: /metrics beside health on the one server, counting what the app handled and published", async () => {
  const cli = startCli(["run", join(fixtures, "memoryApp.ts"), "--http-port", "0", "--metrics"]);
  const url = (await cli.waitFor(servingLine))[2]!;
  await cli.waitFor(/INFO {2}ready app=greeter/);
  expect(cli.stderr()).toMatch(/paths="\/health\/live,\/health\/ready,\/metrics"/);
  const metrics = await get(`${url}/metrics`);
  expect(metrics.status).toBe(200);
  expect(metrics.type).toMatch(/^text\/plain/);
  expect(metrics.body).toContain(
    'ruststream_messages_consumed_total{name="greetings",status="ack"} 1',
  );
  expect(metrics.body).toContain(
    'ruststream_messages_published_total{name="greetings",status="ok"} 1',
  );
  expect((await get(`${url}/health/ready`)).status).toBe(200);
  cli.signal("SIGTERM");
  expect((await cli.exited).code).toBe(0);
});

test("--metrics where the service has no @ruststream/metrics: the copy beside the CLI serves", async () => {
  // A service folder whose only dependency is core: the package is looked up from the service
  // first, then from the CLI's own install (here the workspace's).
  const service = join(dir, "bare");
  mkdirSync(join(service, "node_modules", "@ruststream"), { recursive: true });
  symlinkSync(
    join(packageRoot, "node_modules", "@ruststream", "core"),
    join(service, "node_modules", "@ruststream", "core"),
  );
  writeFileSync(join(service, "package.json"), '{ "type": "module", "private": true }\n');
  copyFileSync(join(fixtures, "memoryApp.ts"), join(service, "app.ts"));
  const cli = startCli(["run", join(service, "app.ts"), "--http-port", "0", "--metrics"], {
    cwd: service,
  });
  const url = (await cli.waitFor(servingLine))[2]!;
  await cli.waitFor(/INFO {2}ready app=greeter/);
  expect((await get(`${url}/metrics`)).body).toContain(
    'ruststream_messages_consumed_total{name="greetings",status="ack"} 1',
  );
  cli.signal("SIGTERM");
  expect((await cli.exited).code).toBe(0);
});

/** A port with the next one free too, for two workers' servers. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    if (port >= 65_535) continue;
    const next = await new Promise<boolean>((resolve) => {
      const probe = createServer()
        .once("error", () => resolve(false))
        .listen(port + 1, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (next) return port;
  }
}

test("--workers 2 --http-port P: each worker serves its own health, P and P+1", async () => {
  const port = await freePortPair();
  const cli = startCli([
    "run",
    join(fixtures, "memoryApp.ts"),
    "--workers",
    "2",
    "--http-port",
    String(port),
  ]);
  await cli.waitForCount(/INFO {2}ready worker=\d app=greeter/, 2);
  const urls = [...cli.stderr().matchAll(new RegExp(servingLine, "g"))].map((m) => [m[1], m[2]]);
  expect(urls.sort()).toEqual([
    ["1", `http://127.0.0.1:${port}`],
    ["2", `http://127.0.0.1:${port + 1}`],
  ]);
  for (const p of [port, port + 1]) {
    expect((await get(`http://127.0.0.1:${p}/health/ready`)).status).toBe(200);
  }
  cli.signal("SIGTERM");
  expect((await cli.exited).code).toBe(0);
});
