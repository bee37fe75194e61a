import type { SettledAs } from "@ruststream/core";

/**
 * RustStream's `status` of a consumed message: `ack` where the handler succeeded and the message is
 * done with, `nack` for everything that comes back, is dropped, dead-lettered or left open. A
 * delivery the handler settled itself counts by whether the handler then succeeded.
 */
export function consumeStatus(outcome: SettledAs, failed: boolean): "ack" | "nack" {
  if (outcome === "ack") return "ack";
  if (outcome === "settled-by-handler") return failed ? "nack" : "ack";
  return "nack";
}
