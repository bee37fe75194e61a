import { lz4OfZeros } from "../../../../packages/pulsar/test/bombs.js";
import { declaring, decompressionTarget, MiB } from "./pulsarDecompression.js";
import { FUZZ_MAX_MESSAGE_SIZE } from "./pulsarSeeds.js";

export const pulsarDecompressLz4 = decompressionTarget("LZ4", () => [
  {
    name: "1 MiB holding 256 MiB, declared so (decoded whole before)",
    input: declaring(256 * MiB, lz4OfZeros(256 * MiB)),
  },
  {
    name: "2 bytes declaring 1 GiB (allocated before)",
    input: declaring(1024 * MiB, Uint8Array.of(0, 0)),
  },
  {
    name: "2 bytes declaring the limit",
    input: declaring(FUZZ_MAX_MESSAGE_SIZE, Uint8Array.of(0, 0)),
  },
]);
