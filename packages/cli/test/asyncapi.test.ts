import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asyncapiDocument, asyncapiJson, asyncapiYaml } from "@ruststream/asyncapi";
import { afterAll, expect, test } from "vitest";
import { loadApp } from "../src/loadApp.js";
import { fixtures, repoRoot, runCli, startCli } from "./cli.js";

const ordersApp = join(repoRoot, "examples", "orders", "src", "app.ts");
const dir = mkdtempSync(join(tmpdir(), "cli-asyncapi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The same module loaded here, as the CLI loads it: the CLI must write exactly the document
// @ruststream/asyncapi makes of it (describing the app connects nothing, so the example's stream
// file is never opened).
const { app } = await loadApp(ordersApp);
const document = asyncapiDocument(app);

test("asyncapi gen writes examples/orders' document as JSON on stdout", async () => {
  const result = await runCli(["asyncapi", "gen", ordersApp], { cwd: dir });
  expect(result.code).toBe(0);
  // On stderr only @ruststream/asyncapi's warning for each message without a payload schema (the
  // receipts, a TypeScript interface), never in the document.
  expect(result.stderr).toMatch(/^(\S+ WARN {2}AsyncAPI message .* has no payload schema.*\n)+$/);
  expect(result.stderr).toContain("AsyncAPI message receipts");
  const written = JSON.parse(result.stdout) as {
    asyncapi: string;
    channels: Record<string, unknown>;
  };
  expect(written).toEqual(JSON.parse(asyncapiJson(document)));
  expect(written.asyncapi).toBe("3.1.0");
  expect(Object.keys(written.channels).length).toBeGreaterThanOrEqual(3);
  for (const channel of ["orders", "receipts", "orders-dlq"])
    expect(result.stdout).toContain(`"${channel}"`);
});

test("asyncapi gen --yaml -o file writes YAML to the file", async () => {
  const out = join(dir, "asyncapi.yaml");
  const result = await runCli(["asyncapi", "gen", ordersApp, "--yaml", "-o", out], { cwd: dir });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("");
  expect(result.stderr.endsWith(`\nwrote ${out}\n`)).toBe(true);
  const yaml = asyncapiYaml(document);
  expect(readFileSync(out, "utf8")).toBe(yaml.endsWith("\n") ? yaml : `${yaml}\n`);
  expect(readFileSync(out, "utf8")).toMatch(/^asyncapi: 3\.1\.0$/m);
});

test("asyncapi gen on a module without an app: exit 1 and the fix", async () => {
  const result = await runCli(["asyncapi", "gen", join(fixtures, "noApp.ts")]);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe("");
  expect(result.stderr).toContain('has no export named "app"');
});

test("asyncapi serve prints the viewer's URL on 127.0.0.1 and serves the page and the document", async () => {
  const cli = startCli(["asyncapi", "serve", ordersApp, "--port", "0"], { cwd: dir });
  const [, url] = await cli.waitFor(
    /AsyncAPI viewer of orders 1\.0\.0: (http:\/\/127\.0\.0\.1:\d+\/)\n/,
    {
      stream: "stdout",
    },
  );
  const page = await fetch(url!);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toMatch(/^text\/html/);
  const html = await page.text();
  expect(html).toMatch(/<title>[^<]*orders 1\.0\.0[^<]*<\/title>/);
  // Self-contained: no script or stylesheet fetched from elsewhere.
  expect(html).not.toMatch(/<script[^>]+src=["']https?:/);
  const json = await fetch(new URL("asyncapi.json", url));
  expect(await json.json()).toEqual(JSON.parse(asyncapiJson(document)));
  const yaml = await fetch(new URL("asyncapi.yaml", url));
  expect(await yaml.text()).toBe(asyncapiYaml(document));
  cli.signal("SIGTERM");
  expect((await cli.exited).code).toBe(0);
});
