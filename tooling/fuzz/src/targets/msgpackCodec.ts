import { msgpack } from "@ruststream/core/msgpack";
import fc from "fast-check";
import { codecTarget, dates, depths, encodings, nestedBytes, protoKeyRefusal } from "./codecs.js";

const values = fc.oneof(
  fc.jsonValue(),
  fc.uint8Array({ maxLength: 64 }),
  dates,
  fc.array(fc.oneof(fc.double(), fc.integer(), fc.string())),
);

export const msgpackCodec = codecTarget({
  name: "msgpack-codec",
  decoder: "the MessagePack codec, msgpack.decode (@ruststream/core/msgpack over @msgpack/msgpack)",
  codec: msgpack,
  seeds: fc.oneof(
    { weight: 6, arbitrary: encodings(values, msgpack) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(depths, fc.constantFrom(0x91, 0x81, 0xdc))
        .map(([depth, head]) => nestedBytes(head, depth, [0x90])),
    },
  ),
  refusesValid: protoKeyRefusal,
  corpus: () => [{ name: "2 MB of array heads", input: nestedBytes(0x91, 2_000_000, [0x90]) }],
});
