import { viewOf } from "./bytes.js";
import {
  CR,
  FORMAT_VERSION,
  HEADER_SIZE,
  MAGIC_0,
  MAGIC_1,
  MAX_TIMESTAMP_MS,
  MIN_BEACON_INTERVAL,
} from "./constants.js";
import { fileError } from "./errors.js";
import type { FileHeader } from "./types.js";

/** 3 bytes magic+version, 1 length byte, 8 created_at, 4 interval, and at least the final CR. */
export const MAX_FILE_NAME_BYTES = HEADER_SIZE - 3 - 1 - 8 - 4 - 1;

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** Throws `INVALID_ARGUMENT` for a header no reader could accept. */
export function validateHeader(header: FileHeader): Uint8Array {
  const name = utf8.encode(header.fileName);
  if (name.length > MAX_FILE_NAME_BYTES) {
    throw fileError(
      "INVALID_ARGUMENT",
      `File name is ${name.length} bytes in UTF-8; the header holds at most ${MAX_FILE_NAME_BYTES}: use a shorter file name`,
    );
  }
  validateBeaconInterval(header.beaconInterval);
  validateTimestamp(header.createdAt, "createdAt");
  return name;
}

export function validateBeaconInterval(interval: number): void {
  if (!Number.isInteger(interval) || interval < MIN_BEACON_INTERVAL || interval > 0xffff_ffff) {
    throw fileError(
      "INVALID_ARGUMENT",
      `Beacon interval ${interval} is invalid: use an integer number of bytes from ${MIN_BEACON_INTERVAL} to 2^32-1 (upstream's options want a multiple of 1024)`,
    );
  }
}

export function validateTimestamp(ms: number, what: string): void {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_TIMESTAMP_MS) {
    throw fileError(
      "INVALID_ARGUMENT",
      `${what} ${ms} is not a whole number of milliseconds between the Unix epoch and year 9999`,
    );
  }
}

export function encodeHeader(header: FileHeader): Uint8Array {
  const name = validateHeader(header);
  const out = new Uint8Array(HEADER_SIZE);
  const view = viewOf(out);
  out[0] = MAGIC_0;
  out[1] = MAGIC_1;
  out[2] = FORMAT_VERSION;
  out[3] = name.length;
  out.set(name, 4);
  view.setBigUint64(4 + name.length, BigInt(header.createdAt));
  view.setUint32(12 + name.length, header.beaconInterval);
  // The rest stays zero; upstream's doc says the padding ends with "\n" but it writes CR.
  out[HEADER_SIZE - 1] = CR;
  return out;
}

/**
 * Recognises a SeaStreamer file by its first three bytes, whatever its name: `true`/`false`, or
 * `undefined` while fewer than three bytes are known and they match so far.
 */
export function isSeaStreamerFile(bytes: Uint8Array): boolean | undefined {
  const expected = [MAGIC_0, MAGIC_1, FORMAT_VERSION];
  for (let i = 0; i < expected.length; i++) {
    if (i >= bytes.length) return undefined;
    if (bytes[i] !== expected[i]) return false;
  }
  return true;
}

function checkMagic(bytes: Uint8Array): void {
  const n = Math.min(bytes.length, 2);
  for (let i = 0; i < n; i++) {
    if (bytes[i] !== (i === 0 ? MAGIC_0 : MAGIC_1)) {
      throw fileError(
        "FILE_NOT_SEASTREAMER",
        "Not a SeaStreamer .ss file: it does not start with the bytes 'Ss'. Point the broker at a .ss file, or at a new path to create one",
        0,
      );
    }
  }
  if (bytes.length > 2 && bytes[2] !== FORMAT_VERSION) {
    throw fileError(
      "FILE_VERSION_UNSUPPORTED",
      `SeaStreamer file format version ${bytes[2]} is not supported (only version 1 is): write a new file`,
      2,
    );
  }
}

/**
 * Parses the header from the first bytes of a file. `strict` also checks the final CR, which
 * upstream writes but never reads.
 */
export function decodeHeader(bytes: Uint8Array, strict = true): FileHeader {
  checkMagic(bytes);
  if (bytes.length < HEADER_SIZE) {
    throw fileError(
      "FILE_TRUNCATED",
      `The file ends inside its ${HEADER_SIZE}-byte header after ${bytes.length} bytes, so it holds no messages: delete it or write a new one`,
      0,
    );
  }
  const view = viewOf(bytes);
  const nameLength = bytes[3]!;
  if (nameLength > MAX_FILE_NAME_BYTES) {
    throw fileError(
      "FILE_CORRUPT",
      `Header file name length ${nameLength} overflows the header`,
      3,
    );
  }
  let fileName: string;
  try {
    fileName = utf8Strict.decode(bytes.subarray(4, 4 + nameLength));
  } catch {
    throw fileError("FILE_CORRUPT", "Header file name is not valid UTF-8", 4);
  }
  const createdAt = view.getBigUint64(4 + nameLength);
  if (createdAt > BigInt(MAX_TIMESTAMP_MS)) {
    throw fileError("FILE_CORRUPT", "Header created_at is past year 9999", 4 + nameLength);
  }
  const beaconInterval = view.getUint32(12 + nameLength);
  if (beaconInterval < MIN_BEACON_INTERVAL) {
    throw fileError(
      "FILE_CORRUPT",
      `Header beacon interval ${beaconInterval} is below the minimum ${MIN_BEACON_INTERVAL}`,
      12 + nameLength,
    );
  }
  if (strict && bytes[HEADER_SIZE - 1] !== CR) {
    throw fileError("FILE_CORRUPT", "Header does not end with 0x0D", HEADER_SIZE - 1);
  }
  return { fileName, createdAt: Number(createdAt), beaconInterval };
}
