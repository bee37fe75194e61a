import type { RustStream } from "@ruststream/core";

/**
 * One row of the operations bench: what a process loads before it times the full app, and what it
 * adds to the app. Each row runs in a process of its own, so a row that only loads a package (and
 * leaves it off) differs from the bare row in exactly that.
 */
export interface OpsRow {
  readonly name: string;
  /**
   * The rows this one is also held against, beside the bare row (by name): tracing against the bare
   * SDK spans it cannot do without, so the ratio is what the package adds beyond the SDK.
   */
  readonly against?: readonly string[];
  /** Loads what the row needs; returns what it adds to each app (nothing for "loaded, off"). */
  prepare(): Promise<(app: RustStream) => void>;
}

/** The baseline every row is compared with: the full app and nothing else. */
export const bareRow: OpsRow = {
  name: "bare",
  prepare: async () => () => {},
};
