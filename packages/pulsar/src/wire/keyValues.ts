// Properties as Pulsar carries them, a list of key/value pairs (message properties, producer and
// consumer metadata), and as this client takes and hands them over, a record or a map.
import type { KeyValue } from "./commands/shapes.js";

/** The pairs of a record or map; `undefined` for none, so an empty list is never sent. */
export function toKeyValues(
  properties: Readonly<Record<string, string>> | ReadonlyMap<string, string> | undefined,
): KeyValue[] | undefined {
  if (properties === undefined) return undefined;
  const entries = properties instanceof Map ? [...properties] : Object.entries(properties);
  if (entries.length === 0) return undefined;
  return entries.map(([key, value]) => ({ key, value }));
}

// Most messages carry no properties: they share one empty map rather than each allocating its own
// (the type is read-only, so no reader can fill it for the others).
const noProperties: ReadonlyMap<string, string> = new Map<string, string>();

/** The pairs of a received message as a map. */
export function propertiesOf(list: KeyValue[] | undefined): ReadonlyMap<string, string> {
  if (list === undefined || list.length === 0) return noProperties;
  const map = new Map<string, string>();
  for (const { key, value } of list) map.set(key, value);
  return map;
}
