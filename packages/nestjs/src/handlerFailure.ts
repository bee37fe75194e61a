/**
 * What a failed Nest handler hands over, as an Error the runtime can log and name in a dead
 * letter's reason. Nest's exception filters turn a thrown exception into an Observable that errors
 * with a plain object (`{ status: "error", message: "Internal server error" }`, or an
 * `RpcException`'s error), having logged the exception itself.
 */
export function handlerFailure(pattern: string, error: unknown): Error {
  if (error instanceof Error) return error;
  const message =
    typeof error === "object" && error !== null && "message" in error
      ? String((error as { message: unknown }).message)
      : String(error);
  return new Error(`the handler of pattern ${pattern} failed: ${message}`, { cause: error });
}
