import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

// The README's TestApp example is test/readme.testApp.test.ts, byte for byte: that file is
// type-checked with the package and run as a test, so the code a reader copies compiles and passes.
it("the README's TestApp example is test/readme.testApp.test.ts", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /## Test an app: TestApp\n[\s\S]*?```ts\n([\s\S]*?)```\n/.exec(readme)?.[1];
  const example = readFileSync(new URL("./readme.testApp.test.ts", import.meta.url), "utf8");
  expect(block, "copy test/readme.testApp.test.ts into the README's TestApp block").toBe(example);
});
