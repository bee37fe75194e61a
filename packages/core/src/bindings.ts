/** A value that survives `JSON.stringify` and back unchanged. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/**
 * Per-broker facts a descriptor or a publish policy carries for generated docs, keyed by protocol in
 * the manner of AsyncAPI bindings: `{ kafka: { groupId: "billing" } }`, `{ redis: { group: "g" } }`.
 * Documentation only: the runtime never reads them, and they never hold a credential.
 */
export type Bindings = Readonly<Record<string, { readonly [key: string]: JsonValue }>>;
