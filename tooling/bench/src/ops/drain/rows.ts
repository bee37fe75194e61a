// The drain rows of the operations bench by key, for a row's process of its own (../../rows/rowChild.ts
// runs `runRow`): the full app draining a real broker (the Redis streams drain of
// ../../redis/drain/, the Kafka drain of ../../kafka/, the same app and the same orders), without
// tracing, with `tracing()`, and with only a bare SDK span per delivery (the floor).
import type { RustStream } from "@ruststream/core";
import type { Trial } from "../../kafka/rawRows.js";
import type { DrainTrial } from "../../redis/drain/rows.js";
import { otelAt, sdkSpanFloor, tracingOn } from "../tracing.js";

/**
 * What a drain adds to the app: nothing, tracing, the floor; or tracing with 1% of traces sampled;
 * or tracing as the package was at `OTEL_AT` (../tracing.ts), for a before/after in one run.
 */
export const drainModes = ["off", "traced", "sampled", "floor", "at"] as const;
export type DrainMode = (typeof drainModes)[number];
export const drainBrokers = ["redis", "kafka"] as const;
export type DrainBroker = (typeof drainBrokers)[number];

/** A row's key: `<broker>:<mode>`, as main.ts hands it to the row's process. */
export function drainKey(broker: DrainBroker, mode: DrainMode): string {
  return `${broker}:${mode}`;
}

// A row's process runs its row twice (warm-up, then timed): the SDK is registered once.
let configured: { mode: DrainMode; configure: ((app: RustStream) => void) | undefined } | undefined;
async function configureOf(mode: DrainMode): Promise<((app: RustStream) => void) | undefined> {
  if (configured !== undefined) {
    if (configured.mode !== mode) throw new Error(`a drain process runs one mode, not ${mode}`);
    return configured.configure;
  }
  if (mode === "at" && otelAt === undefined)
    throw new Error("the drain mode at needs OTEL_AT=<ref>");
  const configure =
    mode === "off"
      ? undefined
      : mode === "floor"
        ? await sdkSpanFloor(false)
        : await tracingOn(mode === "sampled", mode === "at" ? otelAt : undefined);
  configured = { mode, configure };
  return configure;
}

/** The row module's entry (../../rows/protocol.ts): one drain of a filled stream or topic. */
export async function runRow(key: string, input: unknown): Promise<unknown> {
  const [broker, mode] = key.split(":") as [string, DrainMode];
  if (!drainModes.includes(mode))
    throw new Error(`no drain mode ${mode}: ${drainModes.join(", ")}`);
  const configure = await configureOf(mode);
  if (broker === "redis") {
    const redis = await import("@ruststream/redis");
    const { appDrain } = await import("../../redis/drain/rows.js");
    return appDrain(redis, false, configure)(input as DrainTrial);
  }
  if (broker === "kafka") {
    const { fullApp } = await import("../../kafka/packageRows.js");
    return fullApp("librdkafka", "auto", configure)(input as Trial);
  }
  throw new Error(`no drain broker ${broker}: ${drainBrokers.join(", ")}`);
}
