// An AMQP field table checked as bytes, before amqplib decodes it. amqplib's decoder recurses once
// per nested table or array, so a table a peer nested a few thousand deep (about 7 bytes a level,
// well inside one frame) overflows the stack while the frame is read: the connection fails, and
// after the reconnect the server delivers the same message again, without end. This walk keeps its
// own stack and stops at the nesting a header may have, and at anything amqplib would misread.

/** Why a table's bytes are refused; `entry` names the top-level entry where it was found. */
export interface TableRefusal {
  readonly kind: "nesting" | "malformed";
  readonly entry: string | undefined;
  readonly detail: string;
}

/** Bytes each fixed-size value takes after its tag, as amqplib reads them. */
const fixedSizes: Readonly<Record<string, number>> = {
  t: 1,
  b: 1,
  B: 1,
  s: 2,
  u: 2,
  I: 4,
  i: 4,
  f: 4,
  D: 5,
  l: 8,
  d: 8,
  T: 8,
  V: 0,
};

/** An open table or array: where its bytes end, and whether its values have names. */
interface Level {
  readonly end: number;
  readonly table: boolean;
}

/**
 * Checks the table in `bytes[start, end)`: every value's tag one amqplib reads, every length inside
 * its container, and tables and arrays nested at most `maxNesting` deep inside a top-level entry.
 * Undefined when amqplib can decode it as it is.
 */
export function checkTable(
  bytes: Uint8Array,
  start: number,
  end: number,
  maxNesting: number,
): TableRefusal | undefined {
  // Checked for every delivery: an empty table (what most messages carry) costs nothing, and the
  // walk makes no closure, view or level until a table nests.
  if (start === end) return undefined;
  const open: Level[] = [{ end, table: true }];
  let offset = start;
  // The top-level entry being read, as bytes: its name is made only for a refusal.
  let entryAt = -1;
  let entryLength = 0;
  while (open.length > 0) {
    const level = open[open.length - 1] as Level;
    if (offset === level.end) {
      open.pop();
      continue;
    }
    if (level.table) {
      const nameLength = bytes[offset] as number;
      if (offset + 1 + nameLength > level.end) {
        return malformed(
          nameAt(bytes, entryAt, entryLength),
          `an entry name runs past its table at byte ${offset - start}`,
        );
      }
      if (open.length === 1) {
        entryAt = offset + 1;
        entryLength = nameLength;
      }
      offset += 1 + nameLength;
    }
    if (offset >= level.end)
      return malformed(
        nameAt(bytes, entryAt, entryLength),
        `a value is missing at byte ${offset - start}`,
      );
    const tag = String.fromCharCode(bytes[offset] as number);
    offset += 1;
    const fixed = fixedSizes[tag];
    if (fixed !== undefined) {
      offset += fixed;
    } else if (tag === "S" || tag === "x" || tag === "F" || tag === "A") {
      if (offset + 4 > level.end)
        return malformed(
          nameAt(bytes, entryAt, entryLength),
          `a length runs past its table at byte ${offset - start}`,
        );
      const length = uint32At(bytes, offset);
      offset += 4;
      if (offset + length > level.end) {
        return malformed(
          nameAt(bytes, entryAt, entryLength),
          `a value of ${length} bytes runs past its table at byte ${offset - start}`,
        );
      }
      if (tag === "S" || tag === "x") {
        offset += length;
      } else if (open.length > maxNesting) {
        return {
          kind: "nesting",
          entry: nameAt(bytes, entryAt, entryLength),
          detail: `more than ${maxNesting} levels`,
        };
      } else {
        open.push({ end: offset + length, table: tag === "F" });
      }
    } else {
      return malformed(
        nameAt(bytes, entryAt, entryLength),
        `the value type "${tag}" at byte ${offset - 1 - start} is not one AMQP defines`,
      );
    }
    if (offset > level.end)
      return malformed(
        nameAt(bytes, entryAt, entryLength),
        `a value runs past its table at byte ${offset - start}`,
      );
  }
  return undefined;
}

function malformed(entry: string | undefined, detail: string): TableRefusal {
  return { kind: "malformed", entry, detail };
}

/** The big-endian unsigned 32-bit number at `offset`. */
function uint32At(bytes: Uint8Array, offset: number): number {
  return (
    (bytes[offset] as number) * 0x1000000 +
    (((bytes[offset + 1] as number) << 16) |
      ((bytes[offset + 2] as number) << 8) |
      (bytes[offset + 3] as number))
  );
}

/** The entry name at `at` (`length` bytes), or undefined before the first entry. */
function nameAt(bytes: Uint8Array, at: number, length: number): string | undefined {
  return at < 0 ? undefined : Buffer.from(bytes.buffer, bytes.byteOffset + at, length).toString();
}
