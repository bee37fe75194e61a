import type { LinkStates } from "@ruststream/core/broker";
import { WatchedClient } from "../watchedClient.js";
import { connectionFailure, crashRestarts, messageOf, refusedLogin } from "./errors.js";
import type { KjsAdmin, KjsConsumer } from "./kafkajs.js";

// What kafkajs says of a client's connections. A consumer retries a failing fetch (its retry
// settings: about 10-15 s by default), then crashes (CRASH) and is started again, over and over
// while the cluster is gone: by kafkajs itself (`restart`), or by the engine (consumer.ts) when the
// crash is one kafkajs does not restart from but the cluster being away explains (errors.ts); it
// connects again once the cluster is back (GROUP_JOIN). A crash nobody restarts from (a refused
// login, a permission, any error not known to be transient) ends it for good. A producer has no
// such events: its produce requests fail on their connection once their retries run out, and it is
// back when a request goes through, or when the cluster answers the link's admin client again (the
// probe), whichever comes first.

/**
 * Counts a consumer in `states` from its events: `reconnecting` from a crash it is started again
 * from, until it joins its group again; `lost` for good from one it is not. Answers what stops watching it.
 */
export function watchConsumer(consumer: KjsConsumer, states: LinkStates): { close(): void } {
  const watched = new WatchedClient(states);
  const { events } = consumer;
  const unlisten = [
    consumer.on(events.CRASH!, ({ payload }) => {
      if (crashRestarts(payload)) watched.down(`a consumer restarts: ${messageOf(payload.error)}`);
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
      else if (refusedLogin(error))
        watched.refused(`the cluster refused the login: ${messageOf(error)}`);
      else if (connectionFailure(error))
        watched.down(`a produce request failed: ${messageOf(error)}`);
    },
    close: () => watched.close(),
  };
}
