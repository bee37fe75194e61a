import type { LinkStates } from "@ruststream/core/broker";
import { WatchedClient } from "../watchedClient.js";
import { call, type RdClient, type RdError } from "./rdkafka.js";

// What librdkafka's error events say of a client's connections. It reports them as events, served
// while the client is polled (a consumer's consume loop, a producer's background poll), and retries
// on its own: all broker connections down is the cluster gone for this client (it says so at every
// failed attempt, and nothing when it is back, hence the probe); a refused login or TLS handshake
// is a credential retrying does not fix; a fatal error leaves the client unusable.

// librdkafka's local error codes; the binding reports some with code -1 and only the message.
const ALL_BROKERS_DOWN = -187;
const AUTHENTICATION = -169;
const SSL = -181;
const allBrokersDown = /all broker connections are down/i;
const refusal = /authentication failure|ssl handshake failed|certificate verify failed/i;

/** The cluster refused the login or the TLS handshake. */
export function refusesLogin(error: RdError): boolean {
  return error.code === AUTHENTICATION || error.code === SSL || refusal.test(error.message);
}

/** How long the probe's metadata request may wait for a broker. */
const PROBE_TIMEOUT_MS = 2000;

/**
 * Counts `client` in `states` from its error events: `reconnecting` once all its broker
 * connections are down (until a metadata request through it is answered again), `lost` while the
 * cluster refuses its login and for good on a fatal error. `cluster` names the bootstrap servers.
 */
export function watchClient(client: RdClient, states: LinkStates, cluster: string): WatchedClient {
  const watched = new WatchedClient(states, () =>
    call((cb) => client.getMetadata({ allTopics: false, timeout: PROBE_TIMEOUT_MS }, cb)),
  );
  client.on("event.error", (error) => {
    if (error.isFatal === true) {
      watched.failed(`librdkafka: a fatal error left the client unusable: ${error.message}`);
    } else if (refusesLogin(error)) {
      watched.refused(`the cluster at ${cluster} refused the login: ${error.message}`);
    } else if (error.code === ALL_BROKERS_DOWN || allBrokersDown.test(error.message)) {
      watched.down(`the cluster at ${cluster}: ${error.message}`);
    }
  });
  return watched;
}
