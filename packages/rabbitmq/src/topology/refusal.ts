import { RustStreamError } from "@ruststream/core";

/**
 * A refusal of the server (or of the stand-in, which answers with the server's codes and words)
 * to a declaration or a check, as the error a service author can act on: what is missing or
 * different, and what to do.
 */
export function topologyRefusal(
  what: string,
  code: number | undefined,
  text: string,
  cause?: unknown,
): RustStreamError {
  const options = cause === undefined ? undefined : { cause };
  if (code === 404) {
    return new RustStreamError(
      "invalid-argument",
      `${what} does not exist on the server (${text}): declare it (declare: true on the descriptor or the broker), or create it as the descriptor describes`,
      options,
    );
  }
  if (code === 406) {
    return new RustStreamError(
      "invalid-argument",
      `${what} exists on the server with other settings than the descriptor's (${text}): make the descriptor match the server, or delete and declare it again`,
      options,
    );
  }
  if (code === 405) {
    return new RustStreamError(
      "invalid-argument",
      `${what} is exclusive to another connection (${text})`,
      options,
    );
  }
  return new RustStreamError("broker-failure", `${what}: ${text}`, options);
}

/** A message the exchange could route to no queue, under `mandatory`. */
export function unroutable(exchange: string, routingKey: string, reason: string): RustStreamError {
  const where = exchange === "" ? "the default exchange" : `exchange "${exchange}"`;
  return new RustStreamError(
    "publish-refused",
    `RabbitMQ could route the message nowhere (${reason}): ${where} has no binding for routing key "${routingKey}"${exchange === "" ? " (on the default exchange the key is a queue's name: is the queue declared?)" : ""}. Declare the queue or binding, or publish with mandatory: false to let such messages go`,
  );
}
