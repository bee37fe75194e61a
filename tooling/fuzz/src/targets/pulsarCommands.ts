// pulsar-commands: a simple frame's command, as decodeFrame reads it: every command a broker sends,
// mutated. An unknown enum value, a missing body or damaged bytes must be a FrameError.
import fc from "fast-check";
import { baseCommand } from "../../../../packages/pulsar/src/wire/commands/codec.js";
import {
  CommandType,
  type LookupType,
} from "../../../../packages/pulsar/src/wire/commands/enums.js";
import { decodeFrame, type Frame } from "../../../../packages/pulsar/src/wire/frame.js";
import { type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import {
  commandFrames,
  describeInput,
  ownError,
  refusedByLimit,
  unchanged,
  untouched,
  valid,
} from "./pulsarSeeds.js";

/** A frame (after totalSize) of these command bytes. */
function frameOf(command: Uint8Array): Uint8Array {
  const frame = Buffer.alloc(4 + command.length);
  frame.writeUInt32BE(command.length, 0);
  frame.set(command, 4);
  return frame;
}

const corpusFrame = (command: Uint8Array): Mutated => unchanged(frameOf(command));

export const pulsarCommands = fuzzTarget<Mutated>({
  name: "pulsar-commands",
  decoder: "decodeFrame on a simple frame: BaseCommand and its body (@ruststream/pulsar/wire)",
  inputs: mutated(fc.constantFrom(...valid(commandFrames()))),
  corpus: () => [
    {
      name: "a varint cut short (a RangeError before)",
      input: corpusFrame(Uint8Array.of(0x08, 0xff)),
    },
    { name: "a command type no protocol has", input: corpusFrame(Uint8Array.of(0x08, 99)) },
    {
      name: "a MESSAGE without its body",
      input: corpusFrame(Uint8Array.of(0x08, CommandType.MESSAGE)),
    },
    {
      name: "a LookupType no protocol has (dropped before)",
      input: corpusFrame(
        baseCommand.encode({
          type: CommandType.LOOKUP_RESPONSE,
          lookupTopicResponse: { requestId: 1, response: 9 as typeof LookupType.Connect },
        }),
      ),
    },
  ],
  size: (input) => input.bytes.length,
  decode: (input) => decodeFrame(input.bytes),
  ownError,
  byLimit: refusedByLimit,
  check(input, { threw, value }) {
    if (!untouched(input)) return undefined;
    if (threw) return `a valid command was refused: ${(value as Error).message}`;
    // What the client's own encoder wrote reads back to the same bytes.
    const again = baseCommand.encode((value as Frame).command);
    return Buffer.compare(again, input.bytes.subarray(4)) === 0
      ? undefined
      : "decoded and encoded again, the command's bytes differ";
  },
  memoryBound: (input) => 64 * input.bytes.length + 64 * 1024,
  describe: describeInput,
});
