import { RustStreamError } from "@ruststream/core";

/**
 * The name a consumer's background failures and recovery are reported under (the app's
 * `background-failure` and `background-recovered` events, its health's readiness).
 */
export function consumerSource(stream: string, consumer: string): string {
  return `nats:${stream}/${consumer}`;
}

/**
 * A consumer the server no longer has under a running subscription (deleted by an operator, or an
 * ephemeral one past its inactive threshold while the server was away). `bound`: a push consumer
 * bound with `push: true`, which only its owner creates again; else the subscription creates it
 * again from its settings, at once.
 */
export function consumerGone(
  stream: string,
  consumer: string,
  bound: boolean,
  retryInMs: number,
): RustStreamError {
  return new RustStreamError(
    "broker-failure",
    bound
      ? `the push consumer "${consumer}" on the JetStream stream "${stream}" is gone from the server (deleted): this app receives nothing from it until it is there again, and asks for it again in ${retryInMs / 1000} s, then less and less often. Create it again (nats consumer add ${stream} ${consumer} --target <deliver subject> --ack explicit), or bind with push: { declare: { deliverSubject } }, which creates it again when missing`
      : `the consumer "${consumer}" on the JetStream stream "${stream}" is gone from the server (deleted, or past its inactive threshold): the subscription creates it again from its settings (a durable one starts where its deliver option says)`,
  );
}
