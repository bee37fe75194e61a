import type { RustDelivery } from "./rustService.js";

// How the interop tests compare headers across the two runtimes: as text, by name. The brokers
// that keep headers in a map (NATS, Pulsar's properties, AMQP tables) promise no order, so their
// tests compare the lists sorted.

/** A header list ordered by name. */
export const sortedByName = <T extends readonly [string, unknown]>(list: readonly T[]): T[] =>
  [...list].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Header values as UTF-8 text, each beside its name. */
export const headersAsText = (
  headers: Iterable<readonly [string, Uint8Array]>,
): [string, string][] => [...headers].map(([n, v]) => [n, Buffer.from(v).toString()]);

/** The text of the first header `name` a Rust service's handler saw, `null` when it saw none. */
export const headerOf = (d: RustDelivery, name: string): string | null =>
  d.headers.find(([n]) => n === name)?.[1].toString() ?? null;
