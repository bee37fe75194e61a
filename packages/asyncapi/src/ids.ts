/**
 * A name fit for a key the document points at (`#/channels/<id>`, `#/components/messages/<id>`):
 * AsyncAPI allows letters, digits, `.`, `-` and `_` in component keys, and a `/` would need JSON
 * pointer escaping in every reference, so anything else becomes `_`.
 */
export function toId(name: string): string {
  const id = name.replace(/[^\w.-]/g, "_");
  return id.length === 0 ? "_" : id;
}

/** `base`, or `base_2`, `base_3`... : the first that `taken` does not hold. */
export function uniqueId(base: string, taken: (id: string) => boolean): string {
  if (!taken(base)) return base;
  for (let n = 2; ; n += 1) {
    const candidate = `${base}_${n}`;
    if (!taken(candidate)) return candidate;
  }
}

/** A reference to `#/<path...>`, each segment escaped as a JSON pointer requires. */
export function refTo(...path: readonly string[]): { readonly $ref: string } {
  return { $ref: `#/${path.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}` };
}
