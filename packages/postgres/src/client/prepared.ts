import { createHash } from "node:crypto";

/**
 * One of the queue's own statements (a claim, a settle, a renewal), sent again and again with new
 * values, and the name a client may prepare it under on each connection: the server then parses
 * and plans it once per connection, where a statement sent by its text alone is planned at every
 * call (the key-ordered claim took about as long to plan as to run).
 */
export interface Prepared {
  /** `ruststream_` and a hash of the text: one text, one name, within PostgreSQL's 63 bytes. */
  readonly name: string;
  readonly text: string;
}

/** The statement `text` under its name. */
export function prepared(text: string): Prepared {
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 24);
  return { name: `ruststream_${hash}`, text };
}
