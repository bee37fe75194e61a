// What the RabbitMQ stream scenarios' service and their runner share: where the service keeps the
// offset it last handled, and the consumer's credit.
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * An AMQP consumer of a stream keeps no offset on the server (`@ruststream/rabbitmq`'s README,
 * "Stream queues"), so a deployment reading a stream from an offset keeps its own; this one keeps
 * it in a file named for the run's stream, which the service reads at its start and the target
 * removes at the end.
 */
export function streamOffsetFile(key: string): string {
  return join(tmpdir(), `ruststream-chaos-${key}.offset`);
}

/**
 * The stream consumer's credit (its `prefetch`, the package's default): what it may have been
 * handed and not yet handled, so what a lost connection may deliver again once it consumes again
 * after the last message it was handed. One replica reads the whole stream, and 32 held it below
 * the load's rate.
 */
export const RABBIT_STREAM_CREDIT = 256;
