import { readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { decodeFile, FileProducer } from "../src/formatEntry.js";
import { streamTip } from "../src/wire/io/streamTip.js";
import { tempDir, text, utf8 } from "./tempDir.js";

// A stream's tip is found in two steps: the file's end, then the stream's frames up to it. A cut
// between the two (the chaos suite's file-truncate met one as a named consumer opened, and its
// startup failed) must not read as damage: the tip is read again from the file as it is now.

/** Once set, the next search for the file's end cuts the file right after it, as a race would. */
const race: { path: string; cutTo: number | undefined } = { path: "", cutTo: undefined };

vi.mock(import("../src/wire/format/resume.js"), async (importOriginal) => {
  const resume = await importOriginal();
  return {
    ...resume,
    findResumePoint: (...args: Parameters<typeof resume.findResumePoint>) => {
      const point = resume.findResumePoint(...args);
      if (race.cutTo !== undefined) {
        truncateSync(race.path, race.cutTo);
        race.cutTo = undefined;
      }
      return point;
    },
  };
});

const dir = tempDir("ruststream-file-tip-");

describe("a stream's tip read while the file is cut", () => {
  it("is the tip of what the file holds after the cut, not a failure", async () => {
    const path = join(dir, "t.ss");
    const p = FileProducer.open(path);
    for (const m of ["m1", "m2", "m3", "m4", "m5"]) await p.send("k", utf8(m));
    await p.flush();
    p.close();
    const m3 = decodeFile(new Uint8Array(readFileSync(path))).messages.find(
      (m) => text(m.payload) === "m3",
    )!;
    race.path = path;
    race.cutTo = m3.offset + 5;
    expect(streamTip(path, "k")?.seq).toBe(2n);
  });
});
