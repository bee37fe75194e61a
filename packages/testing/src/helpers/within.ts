/**
 * `promise`, or a failure naming `step` when it takes longer than `ms`: a hang fails the test
 * saying where. The timer is cleared either way, so it never holds the process open.
 */
export function within<T>(ms: number, step: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${step}: still waiting after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
