import { requireEnv } from "../src/requireEnv.mjs";

/** A call of the standalone's admin REST API; fails naming the call and the answer unless it is OK. */
export async function admin(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${requireEnv("PULSAR_ADMIN_URL")}${path}`, init);
  if (!response.ok)
    throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${await response.text()}`);
  return response;
}
