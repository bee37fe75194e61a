import { RustStreamError } from "@ruststream/core";

// A row's headers as two arrays, `header_names text[]` and `header_values bytea[]`, as the driver
// decoded them. This package writes them one-dimensional, of the same length, without NULLs, every
// name a header name; another writer with INSERT on the table may not: an array holding a NULL,
// one of two dimensions, or names and values that do not pair up. Such a row is still claimed and
// delivered, with its payload and no headers, marked unreadable: the runtime settles it by the
// subscriber's decode policy, where reading its headers threw (a NULL name) or made values up.

/** A row's headers read from its two arrays, or why they cannot be. */
export interface HeaderArrays {
  readonly headerNames: readonly string[];
  readonly headerValues: readonly Uint8Array[];
  /** Why the arrays are not headers (core's error; the headers are then empty), or `undefined`. */
  readonly unreadable: RustStreamError | undefined;
}

/** What is wrong with a row's header arrays, or `undefined` when they are headers. */
function fault(names: unknown, values: unknown): string | undefined {
  if (!Array.isArray(names) || !Array.isArray(values)) return "header arrays that are not arrays";
  if (names.length !== values.length) {
    return `${names.length} header names and ${values.length} header values`;
  }
  for (let i = 0; i < names.length; i++) {
    const name: unknown = names[i];
    if (typeof name !== "string") return `a header name that is ${describe(name)}`;
    if (name.length === 0) return "an empty header name";
    if (!ArrayBuffer.isView(values[i])) {
      return `a value of header "${name.slice(0, 64)}" that is ${describe(values[i])}`;
    }
  }
  return undefined;
}

function describe(value: unknown): string {
  return value === null
    ? "NULL"
    : Array.isArray(value)
      ? "an array (two dimensions)"
      : typeof value;
}

/** The headers of the row `id` of `queue`, from its arrays as the driver decoded them. */
export function headerArrays(
  id: string,
  queue: string,
  names: unknown,
  values: unknown,
): HeaderArrays {
  const wrong = fault(names, values);
  if (wrong === undefined) {
    return {
      headerNames: names as string[],
      headerValues: (values as Uint8Array[]).map(plain),
      unreadable: undefined,
    };
  }
  return {
    headerNames: [],
    headerValues: [],
    unreadable: new RustStreamError(
      "invalid-argument",
      `row ${id} of queue "${queue}" holds ${wrong}: header_names and header_values are one-dimensional arrays of the same length, without NULLs or empty names, as this package writes them; fix the writer`,
    ),
  };
}

/**
 * Bytes as a plain `Uint8Array` of their own: `pg` decodes bytea to a `Buffer` (a subclass, which
 * a caller comparing bytes may tell apart), possibly a view into a larger one.
 */
export function plain(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}
