import { randomUUID } from "node:crypto";

/**
 * A topic, key, stream, group or subscription name no other run used: `rs-test-<prefix>-<8 hex>`.
 * Letters, digits, `-` and what the prefix brings, which Redis, Kafka and Pulsar all accept in a
 * name, so a test reruns against the same long-lived brokers and runs beside others.
 */
export function uniqueName(prefix: string): string {
  return `rs-test-${prefix}-${randomUUID().slice(0, 8)}`;
}
