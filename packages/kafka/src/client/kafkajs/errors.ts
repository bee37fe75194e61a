// How the kafkajs engine reads kafkajs's errors: one place, for the consumers' crashes and the
// producers' requests alike. kafkajs wraps the error of a request's last attempt once its retries
// run out (KafkaJSNumberOfRetriesExceeded, whose `cause` is that error), and wraps again on the way
// up, so each question here looks at the whole chain.

/** The error names kafkajs gives a request that failed on its connection, not on its content. */
const connectionErrors = new Set([
  "KafkaJSConnectionError",
  "KafkaJSConnectionClosedError",
  "KafkaJSRequestTimeoutError",
  "KafkaJSBrokerNotFound",
]);

/**
 * Names of errors a cluster that is away (stopped, restarting, electing) ends in, besides the
 * connection's: kafkajs marks them not retriable, so its consumer does not restart from them, yet
 * the same request goes through once the cluster is back. A restarted consumer (kafkajs's own
 * restart) that meets the cluster still gone crashes on the first of them: "Failed to find group
 * coordinator", "No broker available".
 */
const awayErrors = new Set([
  "KafkaJSNumberOfRetriesExceeded",
  "KafkaJSGroupCoordinatorNotFound",
  "KafkaJSNoBrokerAvailableError",
  "KafkaJSMetadataNotLoaded",
  "KafkaJSTopicMetadataNotLoaded",
  "KafkaJSLockTimeout",
  "KafkaJSTimeout",
]);

/**
 * Protocol error types that no retry fixes: a credential, a permission, a setting. A crash whose
 * chain holds one ends the consumer even when something else in the chain looks transient (kafkajs
 * wraps a refused fetch in KafkaJSNumberOfRetriesExceeded too).
 */
const refusals = new Set([
  "SASL_AUTHENTICATION_FAILED",
  "ILLEGAL_SASL_STATE",
  "UNSUPPORTED_SASL_MECHANISM",
  "TOPIC_AUTHORIZATION_FAILED",
  "GROUP_AUTHORIZATION_FAILED",
  "CLUSTER_AUTHORIZATION_FAILED",
  "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
  "INVALID_CONFIG",
  "INVALID_GROUP_ID",
  "INVALID_SESSION_TIMEOUT",
  "INCONSISTENT_GROUP_PROTOCOL",
  "UNSUPPORTED_VERSION",
  "UNKNOWN_TOPIC_OR_PARTITION",
]);

/** The errors of `error`'s chain, outermost first (bounded: a cause may point back). */
function chain(error: unknown): Error[] {
  const seen: Error[] = [];
  for (let e = error; e instanceof Error && !seen.includes(e); e = (e as { cause?: unknown }).cause)
    seen.push(e);
  return seen;
}

const typeOf = (e: Error) => (e as { type?: unknown }).type;

/** Whether `error` is the connection failing: what kafkajs's retries end on when the cluster is gone. */
export function connectionFailure(error: unknown): boolean {
  return chain(error).some(
    (e) => connectionErrors.has(e.name) || /^Connection error/.test(e.message),
  );
}

/** Whether the cluster refused the client's login. */
export function refusedLogin(error: unknown): boolean {
  return chain(error).some(
    (e) =>
      e.name === "KafkaJSSASLAuthenticationError" || typeOf(e) === "SASL_AUTHENTICATION_FAILED",
  );
}

/**
 * What follows a consumer's crash that kafkajs does not restart from: `restart` when the cluster
 * was away (the connection, a coordinator or broker not found, retries run out on a retriable
 * error, a timeout), so starting the consumer again once the cluster answers loses nothing;
 * `fatal` for a refusal no retry fixes (a login, a permission, a setting, an unknown topic) and for
 * any error not known to be transient, which fails loudly rather than retrying forever.
 */
export function crashOutcome(error: unknown): "restart" | "fatal" {
  const errors = chain(error);
  if (refusedLogin(error) || errors.some((e) => refusals.has(String(typeOf(e))))) return "fatal";
  if (errors.length === 0) return "fatal";
  const transient = errors.some(
    (e) =>
      connectionErrors.has(e.name) ||
      awayErrors.has(e.name) ||
      /^Connection error/.test(e.message) ||
      (e as { retriable?: unknown }).retriable === true,
  );
  return transient ? "restart" : "fatal";
}

/**
 * Whether a consumer's crash (kafkajs's CRASH payload) is followed by a start again: kafkajs's own
 * (`restart`), or the engine's for a crash of the cluster being away.
 */
export function crashRestarts(crash: { readonly error?: unknown; readonly restart?: boolean }) {
  return crash.restart === true || crashOutcome(crash.error) === "restart";
}

export const messageOf = (error: unknown) =>
  error instanceof Error ? error.message : String(error);
