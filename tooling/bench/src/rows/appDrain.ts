// How every drain bench's full-app row ends its run: the app started with its subscriber, timed by
// the tally from the first order handled to the last one settled (`whenIdle()`: every ack made),
// then stopped.
import type { RustStream } from "@ruststream/core";
import type { Drained, Tally } from "../kafka/tally.js";

export async function drainWithApp(app: RustStream, tally: Tally): Promise<Drained> {
  const running = await app.start();
  await tally.done;
  await running.whenIdle();
  const drained = tally.drained();
  await running.stop();
  return drained;
}
