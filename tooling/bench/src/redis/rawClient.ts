import { Redis } from "ioredis";

/**
 * A plain ioredis connection, set up as the package sets up its own (RESP2, no auto-pipelining), so
 * the raw loop differs from the package only in the code around the commands.
 */
export async function openRaw(url: string, role: string): Promise<Redis> {
  const client = new Redis(url, {
    protocol: 2,
    lazyConnect: true,
    connectionName: `bench-${role}`,
    maxRetriesPerRequest: null,
  });
  await client.connect();
  return client;
}
