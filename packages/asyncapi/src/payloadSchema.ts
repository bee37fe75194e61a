import type { JsonValue } from "@ruststream/core";
import type { SchemaObject } from "./document.js";
import { refTo } from "./ids.js";

/** Keywords whose value is one subschema. */
const oneSchema = new Set([
  "additionalItems",
  "additionalProperties",
  "contains",
  "else",
  "if",
  "items",
  "not",
  "propertyNames",
  "then",
  "unevaluatedItems",
  "unevaluatedProperties",
]);
/** Keywords whose value is a list of subschemas. */
const schemaList = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords whose value maps names to subschemas. */
const schemaMap = new Set(["dependentSchemas", "patternProperties", "properties"]);

/** Where a payload's schema and the definitions it carries go in `components.schemas`. */
export interface SchemaPlacement {
  /** The component key of the payload's own schema. */
  readonly root: string;
  /** Stores one of the schema's definitions under a fresh key; answers that key. */
  readonly hoist: (definition: string) => string;
}

/**
 * A validator's JSON Schema made fit for `components.schemas`. The AsyncAPI Schema Object is a
 * superset of draft-07, while zod, valibot and arktype answer Standard JSON Schema in draft
 * 2020-12, so the few 2020-12 keywords with a draft-07 spelling are rewritten (`prefixItems` to a
 * list of `items`), the `$schema` claim is dropped, and the definitions (`$defs`, `definitions`)
 * move to components of their own: a `$ref` resolves against the whole document once the schema
 * sits inside it, so `#/$defs/Node` must become `#/components/schemas/<key>`.
 */
export function placePayloadSchema(
  schema: SchemaObject,
  placement: SchemaPlacement,
): { readonly root: SchemaObject; readonly definitions: Readonly<Record<string, SchemaObject>> } {
  const hoisted = new Map<string, string>();
  const definitions: Record<string, SchemaObject> = {};
  const found = { ...asMap(schema.$defs), ...asMap(schema.definitions) };
  for (const name of Object.keys(found)) hoisted.set(name, placement.hoist(name));

  const pointer = (ref: string): string => {
    if (!ref.startsWith("#")) return ref;
    const path = ref.slice(1);
    const match = /^\/(?:\$defs|definitions)\/([^/]+)(.*)$/.exec(path);
    const name = match?.[1] === undefined ? undefined : decodeSegment(match[1]);
    const key = name === undefined ? undefined : hoisted.get(name);
    if (key !== undefined) return `${refTo("components", "schemas", key).$ref}${match?.[2] ?? ""}`;
    return `${refTo("components", "schemas", placement.root).$ref}${path}`;
  };

  for (const [name, definition] of Object.entries(found)) {
    const key = hoisted.get(name);
    if (key !== undefined && isObject(definition)) definitions[key] = rewrite(definition, pointer);
  }
  const { $defs: _defs, definitions: _definitions, ...rest } = schema;
  return { root: rewrite(rest, pointer), definitions };
}

function rewrite(schema: SchemaObject, pointer: (ref: string) => string): SchemaObject {
  const out: Record<string, JsonValue> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === "$schema") continue;
    if (keyword === "$ref" && typeof value === "string") {
      out.$ref = pointer(value);
    } else if (oneSchema.has(keyword) && isObject(value)) {
      out[keyword] = rewrite(value, pointer);
    } else if (schemaList.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((item) => (isObject(item) ? rewrite(item, pointer) : item));
    } else if ((schemaMap.has(keyword) || keyword === "$defs") && isObject(value)) {
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, isObject(v) ? rewrite(v, pointer) : v]),
      );
    } else {
      // Data (enum, const, default, examples) and annotations are kept as they are.
      out[keyword] = value;
    }
  }
  // draft 2020-12 `prefixItems` + `items` is draft-07's `items` list + `additionalItems`.
  const prefix = out.prefixItems;
  if (Array.isArray(prefix)) {
    const rest = out.items;
    delete out.prefixItems;
    out.items = prefix;
    if (rest !== undefined) out.additionalItems = rest;
  }
  return out;
}

function isObject(value: JsonValue | undefined): value is SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asMap(value: JsonValue | undefined): SchemaObject {
  return isObject(value) ? value : {};
}

function decodeSegment(segment: string): string {
  return decodeURIComponent(segment).replace(/~1/g, "/").replace(/~0/g, "~");
}
