import { json } from "@ruststream/core";
import fc from "fast-check";
import { codecTarget, depths, encodings } from "./codecs.js";

const utf8 = new TextEncoder();

export const jsonCodec = codecTarget({
  name: "json-codec",
  decoder: "the JSON codec, json.decode (@ruststream/core)",
  codec: json,
  seeds: fc.oneof(
    { weight: 6, arbitrary: encodings(fc.jsonValue(), json) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(depths, fc.constantFrom("[", '{"a":'), fc.boolean())
        .map(([depth, open, closed]) =>
          utf8.encode(
            open.repeat(depth) + (closed ? (open === "[" ? "]" : "1}").repeat(depth) : ""),
          ),
        ),
    },
  ),
  corpus: () => [{ name: "2 MB of [", input: utf8.encode("[".repeat(2_000_000)) }],
});
