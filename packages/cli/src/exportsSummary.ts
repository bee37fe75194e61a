import { isRustStreamApp } from "./appGuard.js";

/** What a value is, in a word a person recognises: `string`, `function`, `class Order`, `FileBroker`. */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (isRustStreamApp(value)) return "RustStream app";
  if (typeof value === "function") {
    const source = Function.prototype.toString.call(value);
    return source.startsWith("class") ? `class ${value.name || "(anonymous)"}` : "function";
  }
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)
      ?.constructor?.name;
    return typeof name === "string" && name !== "" && name !== "Object" ? name : "object";
  }
  return typeof value;
}

/** `a (string), b (FileBroker)`, or `nothing` for a module without exports. */
export function summariseExports(namespace: Readonly<Record<string, unknown>>): string {
  const names = Object.keys(namespace);
  if (names.length === 0) return "nothing";
  return names.map((name) => `${name} (${kindOf(namespace[name])})`).join(", ");
}
