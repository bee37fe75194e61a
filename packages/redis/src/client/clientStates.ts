import type { LinkChange } from "@ruststream/core/broker";
import type { Cluster, Redis } from "ioredis";

// Where an ioredis client is, from its own events: `reconnecting` as it retries after losing its
// server (each retry says why, by the error the last attempt ended on), `ready` once it is back,
// `end` once it will not try again. Our clients reconnect for as long as the broker lives, so `end`
// comes only from a close of ours, which stops watching first; a server that refuses the client's
// credentials on a reconnect is the one failure retrying does not fix.

/** A server refusing the client's credentials: the password or the ACL user changed under it. */
export function refusesLogin(error: unknown): boolean {
  return error instanceof Error && /^(WRONGPASS|NOAUTH)\b|invalid password/.test(error.message);
}

/**
 * Reports `client`'s state to `report` until the answer is called: `reconnecting` (with the error
 * its last attempt ended on) while it retries, `lost` once the server refused its credentials (until
 * a later attempt is let in) or it stopped reconnecting, `connected` when it is ready again. `place`
 * names the server in reasons (`Redis at 127.0.0.1:6379`).
 */
export function watchClient(
  client: Redis | Cluster,
  place: string,
  report: (change: LinkChange) => void,
) {
  let lastError: string | undefined;
  let refused: string | undefined;
  const onError = (error: unknown) => {
    lastError = error instanceof Error ? error.message : String(error);
    if (refusesLogin(error)) {
      refused = lastError;
      report({ state: "lost", reason: `the server refused the login: ${refused}` });
    }
  };
  const onReconnecting = () => {
    if (refused !== undefined) return;
    report({ state: "reconnecting", reason: lastError ?? `the connection to ${place} closed` });
  };
  const onReady = () => {
    lastError = undefined;
    refused = undefined;
    report({ state: "connected" });
  };
  const onEnd = () => {
    report({
      state: "lost",
      reason: `the connection ended and the client will not reconnect${lastError === undefined ? "" : `: ${lastError}`}`,
    });
  };
  client.on("error", onError);
  client.on("reconnecting", onReconnecting);
  client.on("ready", onReady);
  client.on("end", onEnd);
  return (): void => {
    client.off("error", onError);
    client.off("reconnecting", onReconnecting);
    client.off("ready", onReady);
    client.off("end", onEnd);
  };
}
