// The README's example, line for line, run in a fresh folder, with an assertion under every value
// its comments promise, so the documented code is the code that is checked.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryBroker, RustStream } from "@ruststream/core";
import { afterEach, expect, test, vi } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import {
  asyncapiDocument,
  asyncapiJson,
  asyncapiViewerHtml,
  asyncapiYaml,
  messagesWithoutSchema,
} from "../src/index.js";
import { validated } from "./validated.js";

const home = process.cwd();
afterEach(() => {
  process.chdir(home);
  vi.restoreAllMocks();
});

test("README: the document, its files and the viewer", async () => {
  process.chdir(mkdtempSync(join(tmpdir(), "asyncapi-readme-")));
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);

  const Order = z.object({ id: z.number().int(), sku: z.string() }).meta({ title: "Order" });

  const app = new RustStream({ name: "orders", version: "1.0.0" });
  app.broker(new MemoryBroker(), (b) => {
    b.subscriber("orders", { schema: Order })
      .reply<{ accepted: boolean }>("receipts")
      .maxAttempts(5)
      .deadLetter("orders-dlq")
      .handle(() => ({ accepted: true }));
  });

  // Nothing connects: the document comes from app.describe().
  const doc = asyncapiDocument(app); // warns on stderr: AsyncAPI message receipts has no payload schema
  expect(stderr.mock.calls.map(([line]) => String(line))).toEqual([
    expect.stringContaining(
      "WARN  AsyncAPI message receipts (the reply of subscriber orders) has no payload schema",
    ),
  ]);
  doc.operations?.receive_orders?.reply?.channel; // { $ref: "#/channels/receipts" }
  expect(doc.operations?.receive_orders?.reply?.channel).toEqual({ $ref: "#/channels/receipts" });
  doc.operations?.receive_orders?.["x-ruststream-retry"]?.deadLetter; // "orders-dlq"
  expect(doc.operations?.receive_orders?.["x-ruststream-retry"]?.deadLetter).toBe("orders-dlq");
  doc.components?.schemas?.Order?.required; // ["id", "sku"]
  expect(doc.components?.schemas?.Order?.required).toEqual(["id", "sku"]);
  messagesWithoutSchema(doc); // ["receipts"]: a reply is typed in TypeScript only
  expect(messagesWithoutSchema(doc)).toEqual(["receipts"]);

  writeFileSync("asyncapi.json", asyncapiJson(doc));
  writeFileSync("asyncapi.yaml", asyncapiYaml(doc));
  writeFileSync("asyncapi.html", asyncapiViewerHtml(doc, { title: "Orders" })); // opens offline

  expect(JSON.parse(readFileSync("asyncapi.json", "utf8"))).toEqual(doc);
  expect(parse(readFileSync("asyncapi.yaml", "utf8"))).toEqual(doc);
  await validated(readFileSync("asyncapi.yaml", "utf8"));
  const html = readFileSync("asyncapi.html", "utf8");
  expect(html).toContain("<title>Orders</title>");
  expect(html).toContain("AsyncApiStandalone");
  // Nothing on the page points anywhere: no src, no href but the empty icon.
  expect(html.match(/<(script|link)[^>]*(src|href)=[^>]*>/g)).toEqual([
    '<link rel="icon" href="data:,">',
  ]);
});

test("the README's example is the one above", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /## Use it\s+```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const lines = (text: string) =>
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
  // The imports are laid out differently; everything after them must appear here, in order.
  const all = lines(block);
  const lastImport = all.findLastIndex(
    (line) => line.startsWith("import ") || line.startsWith("} from"),
  );
  const documented = all.slice(lastImport + 1);
  const here = lines(readFileSync(new URL(import.meta.url), "utf8"));
  let at = 0;
  const missing = documented.filter((line) => {
    const found = here.indexOf(line, at);
    if (found === -1) return true;
    at = found + 1;
    return false;
  });
  expect(documented.length).toBeGreaterThan(15);
  expect(missing).toEqual([]);
});
