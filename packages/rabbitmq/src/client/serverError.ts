import { RustStreamError } from "@ruststream/core";

/** The reply code and text of a channel or connection the server closed, from amqplib's error. */
export interface ServerRefusal {
  readonly code: number | undefined;
  /** The server's own words (`NOT_FOUND - no queue 'orders' in vhost '/'`). */
  readonly text: string;
}

export function refusalOf(error: unknown): ServerRefusal {
  const e = error as { code?: unknown; message?: unknown };
  const message = typeof e?.message === "string" ? e.message : String(error);
  // amqplib: `Channel closed by server: 404 (NOT-FOUND) with message "NOT_FOUND - no queue ..."`.
  const quoted = /with message "([^"]*)"/.exec(message)?.[1];
  return { code: typeof e?.code === "number" ? e.code : undefined, text: quoted ?? message };
}

/** A failure of the server or of the way to it, its own words kept as the cause. */
export function brokerFailure(what: string, error: unknown): RustStreamError {
  return new RustStreamError("broker-failure", `${what}: ${refusalOf(error).text}`, {
    cause: error,
  });
}
