import type { LinkStates } from "@ruststream/core/broker";
import { WatchedClient } from "../watchedClient.js";
import type { KjsAdmin, KjsConsumer } from "./kafkajs.js";

// What kafkajs says of a client's connections. A consumer retries a failing fetch (its retry
// settings: about 10-15 s by default), then crashes and restarts itself, over and over while the
// cluster is gone (CRASH with restart), and connects again once it is back (CONNECT, then
// GROUP_JOIN); a crash it does not restart from (a refused login, any error kafkajs does not retry)
// ends it for good. A producer has no such events: its produce requests fail on their connection
// once their retries run out, and it is back when a request goes through, or when the cluster
// answers the link's admin client again (the probe), whichever comes first.

/** The error names kafkajs gives a request that failed on its connection, not on its content. */
const connectionErrors = new Set([
  "KafkaJSConnectionError",
  "KafkaJSConnectionClosedError",
  "KafkaJSRequestTimeoutError",
  "KafkaJSBrokerNotFound",
]);

/** Whether `error` or what it wraps (kafkajs wraps the last attempt's once retries run out) is one. */
function wraps(error: unknown, is: (error: Error) => boolean): boolean {
  for (let e = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (is(e)) return true;
  }
  return false;
}

/** Whether `error` is the connection failing: what kafkajs's retries end on when the cluster is gone. */
export function connectionFailure(error: unknown): boolean {
  return wraps(error, (e) => connectionErrors.has(e.name) || /^Connection error/.test(e.message));
}

function login(error: unknown): boolean {
  return wraps(error, (e) => e.name === "KafkaJSSASLAuthenticationError");
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Counts a consumer in `states` from its events: `reconnecting` from a crash it restarts from until
 * it connects again, `lost` for good from one it does not. Answers what stops watching it.
 */
export function watchConsumer(consumer: KjsConsumer, states: LinkStates): { close(): void } {
  const watched = new WatchedClient(states);
  const { events } = consumer;
  const unlisten = [
    consumer.on(events.CRASH!, ({ payload }) => {
      if (payload.restart === true)
        watched.down(`a consumer restarts: ${messageOf(payload.error)}`);
      else watched.failed(`a consumer crashed for good: ${messageOf(payload.error)}`);
    }),
    consumer.on(events.CONNECT!, () => watched.back()),
    consumer.on(events.GROUP_JOIN!, () => watched.back()),
  ];
  return {
    close: () => {
      for (const off of unlisten) off();
      watched.close();
    },
  };
}

/**
 * A producer's requests, counted in `states`: one failing on its connection makes it
 * `reconnecting`, one the cluster refused the login for `lost`, until a request goes through or
 * `admin` reaches the cluster again.
 */
export function watchRequests(states: LinkStates, admin: KjsAdmin) {
  const watched = new WatchedClient(states, () => admin.describeCluster());
  return {
    /** What a request ended on: nothing when it went through. */
    request(error?: unknown): void {
      if (error === undefined) watched.back();
      else if (login(error)) watched.refused(`the cluster refused the login: ${messageOf(error)}`);
      else if (connectionFailure(error))
        watched.down(`a produce request failed: ${messageOf(error)}`);
    },
    close: () => watched.close(),
  };
}
