// The body the runner publishes (load.ts's `bodyOf`), as a service reads it.

export interface Body {
  readonly k: string;
  readonly s: number;
}

/** The JSON body the runner publishes; anything else is a bug the run must show. */
export function asBody(value: unknown): Body {
  const body = value as Partial<Body> | null;
  if (typeof body?.k !== "string" || typeof body.s !== "number") {
    throw new Error(`not a chaos body: ${JSON.stringify(value)}`);
  }
  return { k: body.k, s: body.s };
}
