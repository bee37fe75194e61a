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
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const open: Level[] = [{ end, table: true }];
  let offset = start;
  let entry: string | undefined;
  const refuse = (detail: string): TableRefusal => ({ kind: "malformed", entry, detail });
  while (open.length > 0) {
    const level = open[open.length - 1] as Level;
    if (offset === level.end) {
      open.pop();
      continue;
    }
    if (level.table) {
      const nameLength = bytes[offset] as number;
      if (offset + 1 + nameLength > level.end) {
        return refuse(`an entry name runs past its table at byte ${offset - start}`);
      }
      if (open.length === 1) {
        entry = Buffer.from(bytes.buffer, bytes.byteOffset + offset + 1, nameLength).toString();
      }
      offset += 1 + nameLength;
    }
    if (offset >= level.end) return refuse(`a value is missing at byte ${offset - start}`);
    const tag = String.fromCharCode(bytes[offset] as number);
    offset += 1;
    const fixed = fixedSizes[tag];
    if (fixed !== undefined) {
      offset += fixed;
    } else if (tag === "S" || tag === "x" || tag === "F" || tag === "A") {
      if (offset + 4 > level.end)
        return refuse(`a length runs past its table at byte ${offset - start}`);
      const length = view.getUint32(offset);
      offset += 4;
      if (offset + length > level.end) {
        return refuse(`a value of ${length} bytes runs past its table at byte ${offset - start}`);
      }
      if (tag === "S" || tag === "x") {
        offset += length;
      } else if (open.length > maxNesting) {
        return { kind: "nesting", entry, detail: `more than ${maxNesting} levels` };
      } else {
        open.push({ end: offset + length, table: tag === "F" });
      }
    } else {
      return refuse(
        `the value type "${tag}" at byte ${offset - 1 - start} is not one AMQP defines`,
      );
    }
    if (offset > level.end) return refuse(`a value runs past its table at byte ${offset - start}`);
  }
  return undefined;
}
