import { type ReadonlyHeaderMap, readRetryCount } from "@ruststream/core";
import { writeRetryCount } from "@ruststream/core/broker";

/**
 * The headers of a copy that goes back for another delivery: the `x-ruststream-retry-count` header
 * raised by the deliveries the original had (one, unless it was reclaimed), every other header as it
 * was. The runtime's attempt is that header plus the copy's own delivery count, so the count travels
 * in the message, as RustStream's Redis crate carries it, and a Rust service reading the same key
 * counts alike. Nothing spent, nothing written: a copy of an entry never handed out stays identical.
 */
export function countedHeaders(headers: ReadonlyHeaderMap, deliveries: number): ReadonlyHeaderMap {
  if (deliveries <= 0) return headers;
  return writeRetryCount(headers.clone(), readRetryCount(headers) + deliveries);
}
