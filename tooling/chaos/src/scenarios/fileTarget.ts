// A stream file in a fresh temporary folder. One process writes a stream file at a time (its lock),
// and the service appends retry copies and dead letters to it, so the load is written whole before
// the service starts and the faults land while it reads.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileBroker } from "@ruststream/file";
import { publishLoad } from "../load.js";
import type { Target } from "./target.js";

export async function fileTarget(key: string): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "ruststream-chaos-"));
  const path = join(dir, "chaos.ss");
  return {
    serviceAddress: path,
    publishBeforeStart: true,
    async publishAll(messages, _windowMs, log) {
      const broker = await new FileBroker({ path }).connect();
      const publisher = await broker.defaultPublishPolicy().pair(broker);
      await publishLoad(broker, publisher, key, messages, 0, log);
    },
    restartBroker: undefined,
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
