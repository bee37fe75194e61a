import type { FuzzTarget } from "../target.js";
import { cborCodec } from "./cborCodec.js";
import { fileEnvelope } from "./fileEnvelope.js";
import { fileFrames } from "./fileFrames.js";
import { fileResume } from "./fileResume.js";
import { jsonCodec } from "./jsonCodec.js";
import { msgpackCodec } from "./msgpackCodec.js";
import { natsHeaders } from "./natsHeaders.js";
import { postgresRow } from "./postgresRow.js";
import { pulsarBatches } from "./pulsarBatches.js";
import { pulsarCommands } from "./pulsarCommands.js";
import { pulsarDecompressLz4 } from "./pulsarDecompressLz4.js";
import { pulsarDecompressSnappy } from "./pulsarDecompressSnappy.js";
import { pulsarDecompressZlib } from "./pulsarDecompressZlib.js";
import { pulsarDecompressZstd } from "./pulsarDecompressZstd.js";
import { pulsarEntries } from "./pulsarEntries.js";
import { pulsarFrames } from "./pulsarFrames.js";
import { rabbitmqContentHeader } from "./rabbitmqContentHeader.js";
import { rabbitmqHeaders } from "./rabbitmqHeaders.js";
import { redisFrame } from "./redisFrame.js";
import { redisStreamEntry } from "./redisStreamEntry.js";

/**
 * Every decoder under fuzz, one file each. A new one (a broker's frames, a codec's decompression)
 * is a file exporting a `FuzzTarget` and one line here.
 */
export const targets: readonly FuzzTarget[] = [
  fileFrames,
  fileResume,
  fileEnvelope,
  redisStreamEntry,
  redisFrame,
  jsonCodec,
  msgpackCodec,
  cborCodec,
  pulsarFrames,
  pulsarCommands,
  pulsarBatches,
  pulsarEntries,
  pulsarDecompressLz4,
  pulsarDecompressZlib,
  pulsarDecompressZstd,
  pulsarDecompressSnappy,
  natsHeaders,
  rabbitmqHeaders,
  rabbitmqContentHeader,
  postgresRow,
];
