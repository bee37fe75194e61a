import { zstdOfRuns } from "../../../../packages/pulsar/test/bombs.js";
import { declaring, decompressionTarget, MiB } from "./pulsarDecompression.js";
import { FUZZ_MAX_MESSAGE_SIZE } from "./pulsarSeeds.js";

export const pulsarDecompressZstd = decompressionTarget("ZSTD", () => [
  {
    name: "12 bytes declaring 1.1 GiB (+1.1 GiB of heap for good before)",
    input: declaring(10, zstdOfRuns(1, 1_181_116_006).subarray(0, 12)),
  },
  { name: "8 KiB of runs declaring 256 MiB", input: declaring(10, zstdOfRuns(2048, 256 * MiB)) },
  {
    name: "8 KiB of runs declaring no size, declared the limit",
    input: declaring(FUZZ_MAX_MESSAGE_SIZE, zstdOfRuns(2048, undefined)),
  },
]);
