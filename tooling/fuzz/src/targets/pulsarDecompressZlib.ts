import { zlibOfZeros } from "../../../../packages/pulsar/test/bombs.js";
import { declaring, decompressionTarget, MiB } from "./pulsarDecompression.js";

export const pulsarDecompressZlib = decompressionTarget("ZLIB", () => [
  {
    name: "256 MiB of zeros in 265 KB, declared 10 bytes (inflated whole before)",
    input: declaring(10, zlibOfZeros(256 * MiB)),
  },
]);
