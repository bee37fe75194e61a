// `@ruststream/redis` as it was at a git ref (../../packageAt.ts), beside this tree's, for rows
// named `app@<ref>`: how a change to the package is measured before/after in one interleaved run.
import { packageAt } from "../../packageAt.js";
import type { RedisModule } from "./rows.js";

/** The full commit a ref names, and the package as it was there. */
export async function redisAt(ref: string): Promise<{ commit: string; redis: RedisModule }> {
  const { commit, module } = await packageAt<RedisModule>("redis", ref);
  return { commit, redis: module };
}
