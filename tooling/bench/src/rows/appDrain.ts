// How every drain bench's full-app row ends its run: the app started with its subscriber, timed by
// the row's tally from the first order handled to the last one settled (`whenIdle()`: every ack
// made and, where the broker answers acks, answered), then stopped.
import type { RustStream } from "@ruststream/core";

/** What a row counts its orders with (kafka/tally.ts, redis/drain/rows.ts). */
export interface AppTally<Drained> {
  readonly done: Promise<void>;
  drained(): Drained;
}

export async function drainWithApp<Drained>(
  app: RustStream,
  tally: AppTally<Drained>,
): Promise<Drained> {
  const running = await app.start();
  await tally.done;
  await running.whenIdle();
  const drained = tally.drained();
  await running.stop();
  return drained;
}
