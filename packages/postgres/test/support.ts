import { setTimeout as sleep } from "node:timers/promises";

/** Polls `condition` until it holds; fails naming `step` after `ms`. */
export async function waitUntil(
  ms: number,
  step: string,
  condition: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${step}: still waiting after ${ms} ms`);
    await sleep(20);
  }
}
