// pulsar-batches: a batch payload split into its messages. The input is the declared count (a
// big-endian int32) in front of the payload, so mutations lie about the count as often as about
// the messages.
import fc from "fast-check";
import { type BatchEntry, readBatch } from "../../../../packages/pulsar/src/wire/batch.js";
import { type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import {
  batches,
  batchPayload,
  describeInput,
  ownError,
  unchanged,
  untouched,
  valid,
  withU32,
} from "./pulsarSeeds.js";

const countOf = (input: Mutated): number =>
  input.bytes.length < 4
    ? 0
    : Buffer.from(input.bytes.buffer, input.bytes.byteOffset, 4).readInt32BE(0);

export const pulsarBatches = fuzzTarget<Mutated>({
  name: "pulsar-batches",
  decoder: "readBatch: a batch's messages by its declared count (@ruststream/pulsar/wire)",
  inputs: mutated(
    fc.constantFrom(...valid(batches.map((payload, i) => withU32([1, 3, 4][i]!, payload)))),
  ),
  corpus: () => [
    {
      name: "a count of -5 (a RangeError out of the consumer before)",
      input: unchanged(withU32(-5, batchPayload(["a", "b"]))),
    },
    {
      name: "a count of 0 (nothing delivered, nothing reported before)",
      input: unchanged(withU32(0, batchPayload(["a", "b"]))),
    },
    {
      name: "a count of 1 for 2 messages (the second dropped before)",
      input: unchanged(withU32(1, batchPayload(["a", "b"]))),
    },
    {
      name: "a count of 2^31 - 1",
      input: unchanged(withU32(0x7fff_ffff, batchPayload(["a", "b"]))),
    },
  ],
  size: (input) => input.bytes.length,
  decode: (input) => readBatch(input.bytes.subarray(4), countOf(input)),
  ownError,
  byLimit: () => false,
  check(input, { threw, value }) {
    if (threw)
      return untouched(input)
        ? `a valid batch was refused: ${(value as Error).message}`
        : undefined;
    // Read, it is exactly the declared count, and every byte after the count is in one message.
    const entries = value as BatchEntry[];
    if (entries.length !== countOf(input))
      return `${entries.length} messages for a count of ${countOf(input)}`;
    const last = entries.at(-1)!.payload;
    const end = last.byteOffset + last.length - input.bytes.byteOffset;
    return end === input.bytes.length
      ? undefined
      : `${input.bytes.length - end} bytes after the last message`;
  },
  memoryBound: (input) => 64 * input.bytes.length + 64 * 1024,
  describe: describeInput,
});
