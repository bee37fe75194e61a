// Our rows by key, for a row's process of its own (../../rows/rowChild.ts runs `runRow`): the full
// app, the broker alone and the raw ioredis loop (rows.ts), and `<row>@<ref>` on the package as it
// was at a git ref (against.ts; main.ts exported it before the rounds). RustStream's row runs its
// own program instead (rows.ts, `rustDrain`).
import * as current from "@ruststream/redis";
import { openRaw, serverTarget } from "../target.js";
import { redisAt } from "./against.js";
import {
  appDrain,
  brokerDrain,
  type Drained,
  type DrainRow,
  type DrainTrial,
  type RedisModule,
  rawDrain,
} from "./rows.js";
import { serverCpuMs } from "./serverCpu.js";

/** A row's drain, with the server's CPU time over it (from before the row connects to its last ack). */
export interface ServedDrain extends Drained {
  readonly serverCpuMs: number;
}

const rowsOf = (redis: RedisModule): Readonly<Record<string, DrainRow>> => ({
  app: appDrain(redis, false),
  "app-schema": appDrain(redis, true),
  broker: brokerDrain(redis),
});

/** The row of `key` (`app`, `app-schema`, `broker`, `raw`, or one of the first three `@<ref>`). */
async function rowOf(key: string): Promise<DrainRow | undefined> {
  if (key === "raw") return rawDrain;
  const [base = "", ref] = key.split("@");
  const redis = ref === undefined ? current : (await redisAt(ref)).redis;
  return rowsOf(redis)[base];
}

/** The row module's entry (../../rows/protocol.ts): one drain of a filled stream. */
export async function runRow(key: string, input: unknown): Promise<ServedDrain> {
  const trial = input as DrainTrial;
  const row = await rowOf(key);
  if (row === undefined) throw new Error(`not a row of ours: ${key}`);
  const admin = await openRaw(serverTarget(trial.url), "admin");
  try {
    const before = await serverCpuMs(admin);
    const drained = await row(trial);
    return { ...drained, serverCpuMs: (await serverCpuMs(admin)) - before };
  } finally {
    admin.disconnect();
  }
}
