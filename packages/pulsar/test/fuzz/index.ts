// Every Pulsar target, for the fuzz suite's list (tooling/fuzz's src/targets/index.ts).
import { pulsarBatches } from "./batches.js";
import { pulsarCommands } from "./commands.js";
import {
  pulsarDecompressLz4,
  pulsarDecompressSnappy,
  pulsarDecompressZlib,
  pulsarDecompressZstd,
} from "./decompression.js";
import { pulsarEntries } from "./entries.js";
import { pulsarFrames } from "./frames.js";
import type { PulsarFuzzTarget } from "./pulsarTarget.js";

export const pulsarTargets: readonly PulsarFuzzTarget[] = [
  pulsarFrames,
  pulsarCommands,
  pulsarBatches,
  pulsarEntries,
  pulsarDecompressLz4,
  pulsarDecompressZlib,
  pulsarDecompressZstd,
  pulsarDecompressSnappy,
];
