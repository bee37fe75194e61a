import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

// The README starts from examples/kafka: its block is that example's src/app.ts, byte for byte, so
// the code a reader copies is the code the example's tests run.
it("the README's first example is examples/kafka/src/app.ts", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /## Start from the example\n[\s\S]*?```ts\n([\s\S]*?)```\n/.exec(readme)?.[1];
  const app = readFileSync(new URL("../../../examples/kafka/src/app.ts", import.meta.url), "utf8");
  expect(block, "copy examples/kafka/src/app.ts into the README's first block").toBe(app);
});
