/** What generated docs (AsyncAPI `servers`) say about a broker's server. */
export interface ServerDescription {
  /** For example `"kafka"`, `"redis"`, `"memory"`. */
  readonly protocol: string;
  readonly protocolVersion?: string;
  /** `host:port`, never with a user or password; absent for an in-process broker. */
  readonly host?: string;
  readonly description?: string;
}

/**
 * The `host:port` of a URL with everything that can hold a secret removed: the user, the password,
 * the query and the fragment. Brokers build descriptions through this so no password reaches docs.
 */
export function hostFromUrl(url: string): string {
  const parsed = new URL(url);
  return parsed.host;
}

const secretKey = /pass|secret|token|credential|auth|sasl|private|cookie|^key$|apikey|api_key/i;

/**
 * A copy of configuration options fit for docs and logs: keys that name secrets are dropped and URLs
 * lose their user and password. Plain objects and arrays are copied deeply; other values are kept.
 */
export function withoutSecrets<T>(options: T): T {
  return strip(options) as T;
}

function strip(value: unknown): unknown {
  if (typeof value === "string") return stripUrl(value);
  if (Array.isArray(value)) return value.map(strip);
  if (typeof value !== "object" || value === null) return value;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (!secretKey.test(key)) out[key] = strip(inner);
  }
  return out;
}

function stripUrl(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/\s]*@/i.test(text)) return text;
  try {
    const url = new URL(text);
    url.username = "";
    url.password = "";
    return url.toString();
  } catch {
    return text.replace(/\/\/[^/\s]*@/, "//");
  }
}
