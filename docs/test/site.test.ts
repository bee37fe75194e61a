import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { type Loopback, launchHeadless, serveLoopback } from "@ruststream/tooling-browser";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type BuiltSite, buildSite } from "../src/build.js";
import { siteName } from "../src/layout.js";

const docs = join(dirname(fileURLToPath(import.meta.url)), "..");
const screenshots = join(docs, ".cache");
const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
};

let site: BuiltSite;
let browser: Browser;
let server: Loopback | undefined;
let origin: string;

beforeAll(async () => {
  // The same build as `pnpm --filter @ruststream/docs build`, then docs/dist served as it is.
  site = await buildSite(join(docs, ".."));
  server = await serveLoopback((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname));
    const file = join(site.dist, path.endsWith("/") ? `${path}index.html` : path);
    if (!file.startsWith(site.dist) || !existsSync(file)) {
      response.writeHead(404, { "content-type": "text/plain" });
      response.end("not found");
      return;
    }
    response.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
    response.end(readFileSync(file));
  });
  origin = server.origin;
  browser = await launchHeadless("the docs site test");
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Opens a page as a person would, noting every console error, page error and failed request. */
async function open(path: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });
  await page.goto(`${origin}/${path}`, { waitUntil: "load" });
  return { page, errors };
}

describe("the docs site in headless Chromium", () => {
  test("every guide and package page shows its title, its heading and the navigation, with no console error", async () => {
    expect(site.pages.length).toBeGreaterThan(20);
    for (const entry of site.pages) {
      const { page, errors } = await open(entry.output);
      const expected = entry.output === "index.html" ? siteName : `${entry.title} · ${siteName}`;
      expect(await page.title(), entry.output).toBe(expected);
      expect((await page.locator("main h1").first().innerText()).trim(), entry.output).toBe(
        entry.title,
      );
      // The page is marked as the current one in the navigation, which lists every page.
      expect(await page.locator('nav a[aria-current="page"]').innerText()).toBe(entry.title);
      expect(await page.locator("nav li a").count()).toBe(site.pages.length + 1);
      expect(errors, `${entry.output}: console errors`).toEqual([]);
      await page.close();
    }
  });

  test("the API reference opens, and names the packages by what a service imports", async () => {
    const { page, errors } = await open("api/index.html");
    expect(await page.title()).toContain("RustStream for TypeScript API");
    const text = await page.innerText("body");
    for (const specifier of [
      "@ruststream/core",
      "@ruststream/core/broker",
      "@ruststream/testing",
    ]) {
      expect(text).toContain(specifier);
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  test("the start page leads to the guides; its screenshot is kept", async () => {
    const { page, errors } = await open("index.html");
    await page.locator("main").getByRole("link", { name: "Getting started" }).click();
    await page.waitForURL(/getting-started\.html$/);
    expect(await page.title()).toBe(`Getting started · ${siteName}`);
    await page.goBack();
    mkdirSync(screenshots, { recursive: true });
    const file = join(screenshots, "docs-start.png");
    await page.screenshot({ path: file });
    console.log(`docs start page screenshot: ${file}`);
    expect(existsSync(file)).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });
});
