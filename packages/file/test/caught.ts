// What a call threw or a promise rejected with, for tests that look at the error itself: core's
// code with `isRustStreamError`, the file's detail with `fileErrorDetail`.

/** The value `fn` throws; fails the test when it returns. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw, and the call returned");
}

/** The reason `fn`'s promise rejects with; fails the test when it resolves. */
export async function rejection(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection, and the promise resolved");
}
