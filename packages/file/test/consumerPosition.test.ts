import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConsumerPosition, MAX_OPEN } from "../src/stream/consumerPosition.js";
import { Sidecar } from "../src/stream/sidecar.js";
import { tempDir } from "./tempDir.js";

const dir = tempDir("ruststream-file-position-");

/** Reads `seqs` as the subscription does: the ones admitted are handed out. */
function read(position: ConsumerPosition, seqs: readonly number[]): string[] {
  return seqs.map((n) => {
    const seq = BigInt(n);
    const admission = position.admit(seq);
    if (admission === "deliver") position.delivered(seq);
    return `${n} ${admission}`;
  });
}

describe("a named consumer's position", () => {
  it("goes past the highest settled message and lists the unsettled ones before it", () => {
    const position = new ConsumerPosition({ next: 1n, open: [] });
    read(position, [1, 2, 3, 4]);
    for (const seq of [2n, 4n]) position.settle(seq);
    expect(position.snapshot()).toEqual({ next: 5n, open: [1n, 3n] });
    position.settle(1n);
    position.settle(3n);
    expect(position.snapshot()).toEqual({ next: 5n, open: [] });
  });

  it("restarted, delivers only the listed ones and what follows, and skips the copied", () => {
    const position = new ConsumerPosition({ next: 6n, open: [2n, 4n] }, new Set([4n, 7n]));
    expect(read(position, [2, 3, 4, 5, 6, 7, 8])).toEqual([
      "2 deliver",
      "3 settled",
      "4 copied",
      "5 settled",
      "6 deliver",
      "7 copied",
      "8 deliver",
    ]);
    // 7 settled by its copy: the position goes past it, 2, 6 and 8 stay open.
    expect(position.snapshot()).toEqual({ next: 8n, open: [2n, 6n] });
  });

  it("forgets a listed message the file no longer holds once it reads past it", () => {
    const position = new ConsumerPosition({ next: 10n, open: [3n] });
    expect(read(position, [5, 10])).toEqual(["5 settled", "10 deliver"]);
    position.settle(10n);
    expect(position.snapshot()).toEqual({ next: 11n, open: [] });
  });

  it(`lists at most ${MAX_OPEN}; past that it resumes at the oldest unsettled`, () => {
    const position = new ConsumerPosition({ next: 0n, open: [] });
    const all = Array.from({ length: MAX_OPEN + 2 }, (_, i) => i);
    read(position, all);
    position.settle(BigInt(MAX_OPEN + 1));
    expect(position.snapshot()).toEqual({ next: 0n, open: [] });
  });

  it("after a seek, starts from what it reads next and skips nothing", () => {
    const position = new ConsumerPosition({ next: 6n, open: [2n] }, new Set([3n]));
    position.reset();
    expect(read(position, [3, 4])).toEqual(["3 deliver", "4 deliver"]);
    position.settle(3n);
    expect(position.snapshot()).toEqual({ next: 4n, open: [] });
  });
});

describe("the stored position", () => {
  it("writes version 1 without open messages (as before) and version 2 with them; reads both", async () => {
    const path = join(dir, "a.pos");
    const sidecar = new Sidecar(path, "orders");
    await sidecar.store(() => ({ next: 7n, open: [] }));
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      version: 1,
      stream: "orders",
      next: "7",
    });
    await sidecar.store(() => ({ next: 9n, open: [3n, 5n] }));
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      version: 2,
      stream: "orders",
      next: "9",
      open: ["3", "5"],
    });
    expect(new Sidecar(path, "orders").load()).toEqual({ next: 9n, open: [3n, 5n] });
  });

  it("refuses a position it cannot read rather than start over", () => {
    const path = join(dir, "bad.pos");
    writeFileSync(path, JSON.stringify({ version: 2, stream: "orders", next: "9", open: [3] }));
    expect(() => new Sidecar(path, "orders").load()).toThrow(/not a RustStream consumer position/);
  });
});
