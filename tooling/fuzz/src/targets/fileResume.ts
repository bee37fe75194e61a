import {
  bufferReader,
  fileErrorDetail,
  findResumePoint,
  HEADER_SIZE,
  type RecoveredStream,
  type ResumePoint,
  recoverStreams,
} from "@ruststream/file/format";
import fc from "fast-check";
import { hex, type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import { intactBefore, streamFile } from "./streamFiles.js";

// What a writer reopening a damaged stream file reads: where to resume (scanning the tail, stepping
// back through the beacons) and each stream's state. It may refuse with the file's own error; it
// never resumes before a message that was whole before the damage.

interface Input {
  readonly file: Mutated;
  /** The writer's maxMessageBytes. */
  readonly limit: number;
}

interface Resumed {
  readonly point: ResumePoint | undefined;
  readonly streams: RecoveredStream[];
}

export const fileResume = fuzzTarget<Input>({
  name: "file-resume",
  decoder: "findResumePoint and recoverStreams over the bytes (@ruststream/file)",
  inputs: fc.record({ file: mutated(streamFile), limit: fc.constantFrom(1024, 64 * 1024) }),
  corpus: () => [],
  size: (input) => input.file.bytes.length,
  decode(input): Resumed {
    const reader = bufferReader(input.file.bytes);
    const point = findResumePoint(reader, { maxMessageBytes: input.limit });
    return { point, streams: point === undefined ? [] : recoverStreams(reader, point) };
  },
  ownError: (error) => fileErrorDetail(error) !== undefined,
  byLimit: ({ threw, value }) => threw && fileErrorDetail(value)?.code === "FRAME_TOO_LARGE",
  check(input, { threw, value }) {
    if (threw) return undefined;
    const { point } = value as Resumed;
    const size = input.file.bytes.length;
    if (point === undefined) return size === 0 ? undefined : `no resume point for ${size} bytes`;
    if (point.offset < HEADER_SIZE || point.offset > size)
      return `resume offset ${point.offset} outside the file`;
    if (input.file.firstChange < HEADER_SIZE) return undefined;
    const intact = intactBefore(input.file.seed, input.file.firstChange);
    if (intact === undefined) return undefined;
    const last = intact.at(-1);
    if (last !== undefined && point.offset < last.end) {
      return `resumes at ${point.offset}, cutting the message at ${last.offset}..${last.end} that was whole before the damage`;
    }
    return undefined;
  },
  memoryBound: (input) => 8 * input.file.bytes.length + 2 * input.limit,
  describe: (input) =>
    `limit ${input.limit}, first change at ${input.file.firstChange}: ${hex(input.file.bytes)}`,
});
