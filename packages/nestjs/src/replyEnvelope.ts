/**
 * RustStream's request/reply hands the caller a reply's payload only, so what is not a handler's
 * value (a failure, the end of a streamed reply) travels in it as an envelope: an object whose one
 * key is ours, which no reply a handler returns is.
 */
export function envelopeOf(key: string, value: unknown): Readonly<Record<string, unknown>> {
  return { [key]: value };
}

/** True for an envelope of `key`. */
export function isEnvelope(reply: unknown, key: string): boolean {
  if (typeof reply !== "object" || reply === null || Array.isArray(reply)) return false;
  const keys = Object.keys(reply);
  return keys.length === 1 && keys[0] === key;
}
