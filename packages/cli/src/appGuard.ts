import type { RustStream } from "@ruststream/core";

const methods = ["broker", "describe", "start", "use", "observe"] as const;

/**
 * Whether `value` is a RustStream app. The service's module may carry its own copy of core (its
 * ESM build, another install), so this reads the app's shape, never `instanceof` against the CLI's
 * copy: an `info` with a name and the methods the CLI and the operations packages call.
 */
export function isRustStreamApp(value: unknown): value is RustStream {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  const info = candidate.info as { name?: unknown } | undefined;
  return (
    typeof info === "object" &&
    info !== null &&
    typeof info.name === "string" &&
    methods.every((method) => typeof candidate[method] === "function")
  );
}
