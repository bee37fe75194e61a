import { declaring, decompressionTarget } from "./pulsarDecompression.js";

export const pulsarDecompressSnappy = decompressionTarget("SNAPPY", () => [
  {
    name: "7 bytes declaring 4 GiB",
    input: declaring(10, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0x61)),
  },
]);
