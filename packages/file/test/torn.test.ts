import { isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  type DecodedMessage,
  type DecodeOutcome,
  decodeFile,
  type FileErrorDetail,
  fileErrorDetail,
  HEADER_SIZE,
  isEndOfStream,
} from "../src/formatEntry.js";
import { diffMessages, FIXTURE_NAMES, fixture } from "./helpers.js";

/** What a damaged outcome says of the file; its error is core's, a `broker-failure`. */
function damageOf(outcome: DecodeOutcome): FileErrorDetail | undefined {
  if (outcome.status !== "damaged") return undefined;
  expect(isRustStreamError(outcome.error, "broker-failure")).toBe(true);
  return fileErrorDetail(outcome.error);
}

/** Where each complete unit ends: frames, and beacons that sit between frames. */
function unitEnds(bytes: Uint8Array): { messages: DecodedMessage[]; ends: number[] } {
  const d = decodeFile(bytes);
  const frameEnds = new Set([HEADER_SIZE, ...d.messages.map((m) => m.end)]);
  const ends = [HEADER_SIZE, ...d.messages.map((m) => m.end)];
  for (const b of d.beacons) if (frameEnds.has(b.offset)) ends.push(b.offset + b.size);
  return { messages: d.messages, ends: ends.sort((a, b) => a - b) };
}

describe.each(FIXTURE_NAMES)("%s cut at every offset", (name) => {
  const bytes = fixture(name);
  const { messages, ends } = unitEnds(bytes);
  const eos = messages.find(isEndOfStream);

  it(
    "returns exactly the complete messages before the cut and reports the cut with its offset",
    { timeout: 60_000 },
    () => {
      for (let cut = 0; cut <= bytes.length; cut++) {
        const d = decodeFile(bytes.subarray(0, cut));
        const complete = messages.filter((m) => m.end <= cut);
        expect(diffMessages(d.messages, complete), `cut at ${cut}`).toBeUndefined();
        if (cut < HEADER_SIZE) {
          expect(d.outcome).toMatchObject({ status: "damaged" });
          expect(damageOf(d.outcome)).toMatchObject({ code: "FILE_TRUNCATED", offset: 0 });
          continue;
        }
        const end = Math.max(...ends.filter((e) => e <= cut));
        let expected: DecodeOutcome["status"] = end === cut ? "clean" : "damaged";
        if (eos && eos.end <= cut) expected = "eos";
        expect({ cut, status: d.outcome.status }).toEqual({ cut, status: expected });
        if (expected === "eos") continue;
        expect(d.outcome).toMatchObject({ end });
        if (expected === "damaged") {
          expect(damageOf(d.outcome)).toMatchObject({ code: "FILE_TRUNCATED", offset: end });
        }
      }
    },
  );
});

describe.each(FIXTURE_NAMES)("%s with a flipped byte", (name) => {
  const bytes = fixture(name);
  const { messages } = decodeFile(bytes);

  it(
    "reports a checksum failure at the frame for any flip in a payload or its checksum",
    { timeout: 60_000 },
    () => {
      let flipped = 0;
      for (const [index, m] of messages.entries()) {
        const payloadStart = m.end - 3 - m.payload.length;
        // Frames split by a beacon are skipped here: their payload is not contiguous in the file.
        if (m.end - m.offset !== 32 + m.streamKey.length + m.payload.length) continue;
        for (let at = payloadStart; at < m.end - 1; at++) {
          flipped++;
          const damaged = bytes.slice();
          damaged[at]! ^= 0x01;
          const d = decodeFile(damaged);
          expect(
            diffMessages(d.messages, messages.slice(0, index)),
            `flip at ${at}`,
          ).toBeUndefined();
          expect(d.outcome).toMatchObject({
            status: "damaged",
            error: { message: expect.stringMatching(/checksum/) },
          });
          expect(damageOf(d.outcome)).toMatchObject({ code: "FILE_CORRUPT", offset: m.offset });
        }
      }
      // Every frame skipped would leave this test checking nothing.
      expect(flipped).toBeGreaterThan(messages.length);
    },
  );

  it(
    "never returns a wrong payload, whichever byte after the header is flipped",
    { timeout: 60_000 },
    () => {
      for (let at = HEADER_SIZE; at < bytes.length; at++) {
        for (const mask of [0x01, 0xff]) {
          const damaged = bytes.slice();
          damaged[at]! ^= mask;
          const d = decodeFile(damaged);
          expect(d.messages.length).toBeLessThanOrEqual(messages.length);
          const untouched = messages.filter((m) => m.end <= at);
          const prefix = d.messages.slice(0, untouched.length);
          expect(diffMessages(prefix, untouched), `flip ${mask} at ${at}`).toBeUndefined();
          // Frame headers carry no checksum: a flipped seq or timestamp can pass, a payload cannot.
          const wrong = d.messages.findIndex(
            (m, i) => Buffer.compare(m.payload, messages[i]!.payload) !== 0,
          );
          expect(wrong, `flip ${mask} at ${at}`).toBe(-1);
          if (d.outcome.status === "damaged") {
            expect(damageOf(d.outcome)?.offset).toBe(d.outcome.end);
            expect(d.outcome.end).toBeLessThanOrEqual(at);
          }
        }
      }
    },
  );
});
