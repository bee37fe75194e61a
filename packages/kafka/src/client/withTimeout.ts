/**
 * `work`, or `failure()` once `ms` pass first. The work goes on unheard past the deadline (a
 * client's own request cannot be called back); its later rejection is handled by the race.
 */
export async function withTimeout<T>(
  work: Promise<T>,
  ms: number,
  failure: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(failure()), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
