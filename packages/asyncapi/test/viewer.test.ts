import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RustStream, silentLogger } from "@ruststream/core";
import { cbor } from "@ruststream/core/cbor";
import { msgpack } from "@ruststream/core/msgpack";
import { app as ordersApp } from "@ruststream/example-orders/src/app.js";
import { type Loopback, launchHeadless, serveLoopback } from "@ruststream/tooling-browser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type AsyncApiDocument, asyncapiDocument, asyncapiViewerHtml } from "../src/index.js";
import { brokers, Order, orderService } from "./services.js";

const screenshots = join(dirname(fileURLToPath(import.meta.url)), "..", ".cache");

let browser: Browser;
let server: Loopback | undefined;
let origin: string;
/** The page each path serves. */
const pages = new Map<string, string>();

beforeAll(async () => {
  server = await serveLoopback((request, response) => {
    const html = pages.get(request.url ?? "");
    response.writeHead(html === undefined ? 404 : 200, {
      "content-type": "text/html; charset=utf-8",
    });
    response.end(html ?? "not found");
  });
  origin = server.origin;
  browser = await launchHeadless("the viewer test");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Shown {
  readonly page: Page;
  readonly text: string;
  readonly requests: readonly string[];
  readonly errors: readonly string[];
}

/** Serves the app's viewer page, opens it as a person would and waits for the rendered document. */
async function show(path: string, app: RustStream): Promise<Shown & { doc: AsyncApiDocument }> {
  const doc = asyncapiDocument(app, { logger: silentLogger });
  pages.set(path, asyncapiViewerHtml(doc));
  const page = await browser.newPage({ viewport: { width: 1680, height: 1050 } });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(`${origin}${path}`);
  // The component renders the operations and messages sections once it has parsed the document.
  await page.waitForSelector("#operations", { timeout: 30_000 });
  await page.waitForSelector("#messages", { timeout: 30_000 });
  // Spaces as a reader sees them: the component writes some as non-breaking spaces.
  const text = (await page.innerText("body")).replace(/\s+/g, " ");
  return { doc, page, text, requests, errors };
}

/** What names a channel on the page: its address, or where its address comes from. */
function channelNames(doc: AsyncApiDocument): string[] {
  return Object.values(doc.channels ?? {}).map(
    (channel) => channel.address ?? "$message.header#/reply-to",
  );
}

function messageNames(doc: AsyncApiDocument): string[] {
  return Object.values(doc.components?.messages ?? {}).map((message) => message.name);
}

describe("the viewer in headless Chromium", () => {
  test("examples/orders: every channel and message on the page, nothing fetched from elsewhere", async () => {
    const { doc, page, text, requests, errors } = await show("/orders", ordersApp);
    expect(errors).toEqual([]);
    expect(requests).toEqual([`${origin}/orders`]);
    expect(text).toContain("orders 1.0.0");
    for (const name of [...channelNames(doc), ...messageNames(doc)]) {
      expect(text, `"${name}" on the page`).toContain(name);
    }
    for (const id of Object.keys(doc.operations ?? {})) expect(text).toContain(id);
    // The order's fields are one click away, as a person opens them.
    expect(text).not.toContain("qty");
    await page.locator("#message-orders-payload").getByText("Expand all").click();
    const expanded = await page.innerText("#message-orders-payload");
    for (const field of ["id", "sku", "qty"]) expect(expanded).toContain(field);

    mkdirSync(screenshots, { recursive: true });
    // What a person sees on opening the page, and the order message with its fields open (a
    // full-page shot would resize the window, and the component re-renders closed at that size).
    const file = join(screenshots, "viewer.png");
    const order = join(screenshots, "viewer-order.png");
    await page.locator("#message-orders").screenshot({ path: order });
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: file });
    console.log(`viewer screenshots: ${file} ${order}`);
    await page.close();
  });

  test("a Kafka service: servers, bindings and every name on the page", async () => {
    const { broker, orders } = brokers.kafka();
    const { doc, page, text, requests, errors } = await show(
      "/kafka",
      orderService("orders-on-kafka", broker, orders),
    );
    expect(errors).toEqual([]);
    expect(requests).toEqual([`${origin}/kafka`]);
    expect(text).toContain("kafka-1.internal:9092");
    for (const name of [...channelNames(doc), ...messageNames(doc)]) {
      expect(text, `"${name}" on the page`).toContain(name);
    }
    mkdirSync(screenshots, { recursive: true });
    const file = join(screenshots, "viewer-kafka.png");
    await page.screenshot({ path: file });
    console.log(`viewer screenshot: ${file}`);
    await page.close();
  });

  test("a subscriber's codecs: a message per media type on the page, each with its content type", async () => {
    const { broker, orders } = brokers.memory();
    const app = new RustStream({ name: "orders-in-three-types", version: "1.0.0" });
    app.broker(broker, (b) => {
      b.subscriber(orders, { schema: Order, codecs: [msgpack, cbor] }).handle(() => {});
    });
    const { doc, page, text, errors } = await show("/codecs", app);
    expect(errors).toEqual([]);
    expect(messageNames(doc)).toEqual(["Order", "Order_msgpack", "Order_cbor"]);
    for (const name of messageNames(doc)) expect(text, `"${name}" on the page`).toContain(name);
    for (const [name, type] of [
      ["Order_msgpack", "application/msgpack"],
      ["Order_cbor", "application/cbor"],
    ] as const) {
      // The text as written (the component shows it in capitals, through CSS).
      const shown = await page.textContent(`#message-${name}`);
      expect(shown, `${name}'s content type`).toContain(type);
    }
    mkdirSync(screenshots, { recursive: true });
    const file = join(screenshots, "viewer-codecs.png");
    await page.locator("#messages").screenshot({ path: file });
    console.log(`viewer screenshot: ${file}`);
    await page.close();
  });

  test("a document holding </script> is shown as text, never run", async () => {
    const hostile = "</script><script>window.__pwned = 1</script><!--";
    const { broker, orders } = brokers.memory();
    const { page, text, errors } = await show("/hostile", orderService(hostile, broker, orders));
    expect(errors).toEqual([]);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(text).toContain(hostile);
    expect(await page.locator("script").count()).toBe(3);
    await page.close();
  });
});
