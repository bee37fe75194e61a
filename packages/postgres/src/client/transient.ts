/** Socket errors a lost or restarting server gives. */
const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs of a server going away or not taking connections yet: class 08 (connection
 * exceptions), 57P01-57P03 (shut down by an administrator, a crash, starting up), 53300 (too many
 * connections).
 */
const serverCodes = new Set(["57P01", "57P02", "57P03", "53300"]);

/**
 * Whether a failed statement is the connection's or the server's passing trouble, which a later
 * try may not meet (a restart, a lost socket), rather than the statement's own (a missing table,
 * a refused login), which every try meets again.
 */
export function isTransient(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    return socketCodes.has(code) || serverCodes.has(code) || code.startsWith("08");
  }
  // pg reports a socket closed under a query without a code.
  const message = (error as { message?: unknown }).message;
  return (
    typeof message === "string" &&
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(
      message,
    )
  );
}

/** The client's words for a failure, for a connection state's reason. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
