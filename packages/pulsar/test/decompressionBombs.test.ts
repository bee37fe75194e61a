// Decompression bombs (issue 40): small payloads whose codec would produce, or allocate, far more
// than any message may hold. Each is decompressed in a process of its own (fixtures/decompressBomb.ts)
// as an entry's metadata declares it, and the process's memory compared before and at its peak:
// every one is refused with a DecodeError, within a bound set by the max message size (5 MiB by
// default). Before, ZLIB inflated 256 MiB before comparing sizes (a 265 KB frame), ZSTD's
// WebAssembly heap grew by what a 12-byte frame header declared (1.1 GiB, kept for the life of the
// process), and LZ4 allocated the declared size, then decompressed past the limit.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { CompressionType } from "../src/wire/commands/enums.js";
import { DEFAULT_MAX_MESSAGE_SIZE } from "../src/wire/frame.js";
import { lz4OfZeros, zlibOfZeros, zstdOfRuns } from "./bombs.js";

const MiB = 1024 * 1024;
/** What a decompression may add to the process, for a limit of 5 MiB: its output, and room. */
const BOUND = 16 * MiB;

const fixture = fileURLToPath(new URL("./fixtures/decompressBomb.ts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "decompression-bombs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Bomb {
  readonly name: string;
  readonly bytes: () => Uint8Array;
  readonly type: number;
  readonly declared: number;
  readonly refusal: RegExp;
}

const { ZLIB, ZSTD, LZ4, SNAPPY } = CompressionType;
const limit = DEFAULT_MAX_MESSAGE_SIZE;
const bombs: Bomb[] = [
  {
    name: "ZLIB: 265 KB inflating to 256 MiB, declared as 10 bytes",
    bytes: () => zlibOfZeros(256 * MiB),
    type: ZLIB,
    declared: 10,
    refusal: /inflates past the 10 bytes/,
  },
  {
    name: "ZLIB: 265 KB inflating to 256 MiB, declared at the limit",
    bytes: () => zlibOfZeros(256 * MiB),
    type: ZLIB,
    declared: limit,
    refusal: /inflates past the 5242880 bytes/,
  },
  {
    name: "ZSTD: a 12-byte frame whose header declares 1.1 GiB",
    bytes: () => zstdOfRuns(1, 1_181_116_006).subarray(0, 12),
    type: ZSTD,
    declared: 10,
    refusal: /the frame declares 1181116006 bytes/,
  },
  {
    name: "ZSTD: 8 KiB of runs whose header declares 256 MiB",
    bytes: () => zstdOfRuns(2048, 256 * MiB),
    type: ZSTD,
    declared: 10,
    refusal: /the frame declares 268435456 bytes/,
  },
  {
    name: "ZSTD: 8 KiB of runs (256 MiB) whose header declares no size, declared at the limit",
    bytes: () => zstdOfRuns(2048, undefined),
    type: ZSTD,
    declared: limit,
    refusal: /holds more than the size declared/,
  },
  {
    name: "LZ4: 1 MiB holding 256 MiB, declared so",
    bytes: () => lz4OfZeros(256 * MiB),
    type: LZ4,
    declared: 256 * MiB,
    refusal: /268435456 bytes, above the max message size/,
  },
  {
    name: "LZ4: 1 MiB holding 256 MiB, declared at the limit",
    bytes: () => lz4OfZeros(256 * MiB),
    type: LZ4,
    declared: limit,
    refusal: /match runs past the declared size/,
  },
  {
    name: "LZ4: 2 bytes declaring 1 GiB",
    bytes: () => Uint8Array.of(0, 0),
    type: LZ4,
    declared: 1024 * MiB,
    refusal: /1073741824 bytes, above the max message size/,
  },
  {
    name: "LZ4: 2 bytes declaring the limit",
    bytes: () => Uint8Array.of(0, 0),
    type: LZ4,
    declared: limit,
    refusal: /a block of 2 bytes cannot hold/,
  },
  {
    name: "SNAPPY: 7 bytes whose preamble declares 4 GiB",
    bytes: () => Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0x61),
    type: SNAPPY,
    declared: 10,
    refusal: /the block declares 4294967295 bytes/,
  },
];

interface Measured {
  readonly outcome: string;
  readonly rssBefore: number;
  readonly peakRss: number;
  readonly externalBefore: number;
  readonly externalAfter: number;
}

async function measure(bomb: Bomb): Promise<Measured> {
  const file = join(dir, `bomb-${bombs.indexOf(bomb)}`);
  writeFileSync(file, bomb.bytes());
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--import",
      "tsx",
      "--conditions=@ruststream/source",
      fixture,
      file,
      String(bomb.type),
      String(bomb.declared),
    ],
    { cwd },
  );
  return JSON.parse(stdout) as Measured;
}

describe("a decompression bomb is refused with a DecodeError, the process growing by less than 16 MiB", () => {
  it.each(bombs.map((bomb) => [bomb.name, bomb] as const))("%s", async (_name, bomb) => {
    const m = await measure(bomb);
    const peak = m.peakRss - m.rssBefore;
    const external = m.externalAfter - m.externalBefore;
    process.stdout.write(
      `${bomb.name}: peak RSS +${(peak / MiB).toFixed(1)} MiB, external +${(external / MiB).toFixed(1)} MiB; ${m.outcome}\n`,
    );
    expect(peak, "peak RSS growth").toBeLessThan(BOUND);
    // WebAssembly memory (ZSTD's heap) counts here, and never shrinks.
    expect(external, "external memory growth").toBeLessThan(BOUND);
    expect(m.outcome).toMatch(/^DecodeError: /);
    expect(m.outcome).toMatch(bomb.refusal);
  });
});
