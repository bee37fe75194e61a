import type { SchemaInterface } from "@asyncapi/parser";
import { type LogFields, type Logger, MemoryBroker, RustStream } from "@ruststream/core";
import * as v from "valibot";
import { expect, test } from "vitest";
import { z } from "zod";
import { asyncapiDocument, asyncapiJson, messagesWithoutSchema } from "../src/index.js";
import { parserErrors, validated } from "./validated.js";

/** A logger that keeps its warnings, to read them back. */
function recording(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const nothing = () => {};
  const logger: Logger = {
    debug: nothing,
    info: nothing,
    warn: (fields: LogFields | string, message?: string) => {
      warnings.push(typeof fields === "string" ? fields : (message ?? ""));
    },
    error: nothing,
    child: () => logger,
  };
  return { logger, warnings };
}

const Category = z.object({
  name: z.string(),
  get children(): z.ZodArray<typeof Category> {
    return z.array(Category);
  },
});

function schemaApp() {
  const app = new RustStream({ name: "schemas", version: "1.0.0" });
  app.broker(new MemoryBroker(), (b) => {
    b.subscriber("categories", { schema: Category }).handle(() => {});
    b.subscriber("trees", {
      schema: z.object({ root: Category, pair: z.tuple([z.string(), z.number()]) }),
    }).handle(() => {});
    b.subscriber("payments", {
      schema: z.object({ amount: z.string().transform((s) => Number(s)) }),
    }).handle(() => {});
    // Valibot itself offers no JSON Schema; @valibot/to-json-schema's toStandardJsonSchema does.
    b.subscriber("plain-valibot", { schema: v.object({ a: v.string() }) }).handle(() => {});
  });
  return app;
}

function field(schema: SchemaInterface | undefined, name: string): SchemaInterface | undefined {
  return schema?.properties()?.[name];
}

test("a recursive schema and its definitions resolve inside the document", async () => {
  const doc = asyncapiDocument(schemaApp(), recording());
  const schemas = doc.components?.schemas ?? {};
  // zod's `#` (the schema itself) and `#/$defs/...` now point into components.schemas.
  expect(JSON.stringify(schemas.categories)).toContain('"$ref":"#/components/schemas/categories"');
  expect(Object.keys(schemas)).toContain("trees.__schema0");
  expect(JSON.stringify(schemas.trees)).toContain('"$ref":"#/components/schemas/trees.__schema0"');
  expect(JSON.stringify(doc)).not.toContain("$defs");
  expect(JSON.stringify(doc)).not.toContain("draft/2020-12");

  const parsed = await validated(asyncapiJson(doc));
  const tree = parsed.operations().get("receive_trees")?.messages().all()[0]?.payload();
  const grandchild = field(field(tree, "root"), "children")?.items() as SchemaInterface;
  expect(Object.keys(grandchild.properties() ?? {})).toEqual(["name", "children"]);
  const category = parsed.operations().get("receive_categories")?.messages().all()[0]?.payload();
  const child = field(category, "children")?.items() as SchemaInterface | undefined;
  expect(Object.keys(child?.properties() ?? {})).toEqual(["name", "children"]);
});

test("a tuple is draft-07's list of items, and a transform is described by its input", async () => {
  const doc = asyncapiDocument(schemaApp(), recording());
  const parsed = await validated(asyncapiJson(doc));
  const pair = field(
    parsed.operations().get("receive_trees")?.messages().all()[0]?.payload(),
    "pair",
  );
  const items = pair?.items();
  expect(Array.isArray(items) ? items.map((i) => i.type()) : items).toEqual(["string", "number"]);
  expect(pair?.additionalItems()).toBe(false);
  const amount = field(
    parsed.operations().get("receive_payments")?.messages().all()[0]?.payload(),
    "amount",
  );
  expect(amount?.type()).toBe("string");
});

test("a validator without JSON Schema is warned about and listed, with the fix", () => {
  const { logger, warnings } = recording();
  const doc = asyncapiDocument(schemaApp(), { logger });
  expect(messagesWithoutSchema(doc)).toEqual(["plain-valibot"]);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain("plain-valibot");
  expect(warnings[0]).toContain("valibot schema gave no JSON Schema");
  expect(warnings[0]).toContain("toStandardJsonSchema from @valibot/to-json-schema");
});

test("the validator gate has teeth: a server without a host is an error", async () => {
  const broken = {
    asyncapi: "3.1.0",
    info: { title: "x", version: "1" },
    servers: { memory: { protocol: "memory" } },
  };
  expect(await parserErrors(JSON.stringify(broken))).toEqual([
    expect.stringMatching(/servers\.memory: .*must have required property "host"/),
  ]);
  await expect(validated(JSON.stringify(broken))).rejects.toThrow(/host/);
});
