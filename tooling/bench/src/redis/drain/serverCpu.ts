// redis-server's own CPU time (INFO cpu), read before and after a row: what the server spent on the
// row's reads and acks, beside the consumer's own CPU.
import type { Cluster, Redis } from "ioredis";

/** The server's CPU time so far (user + system), in ms. */
export async function serverCpuMs(admin: Redis | Cluster): Promise<number> {
  const info = await admin.info("cpu");
  const field = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return (field("used_cpu_user") + field("used_cpu_sys")) * 1000;
}
