// A stream file on a small tmpfs of its own, whose disk fills up at the seeded moments. The writer
// that meets the full disk is the load publisher: a file has one writer at a time, so the service
// (no retry plan) only reads, and the load is published over the window, as for Redis, so the
// faults land under a live writer. The service's stored positions live beside the file, on the
// same disk, so its acks meet the full disk too.
//
// What keeps the checker honest: a publish that fails (ENOSPC) is sent again by the publisher
// until it is written, so a message lost would be the framework's (a frame written and then cut, a
// reader that skipped past a half frame, a position stored past what was handled); a failed
// publish whose bytes landed after all shows up as a duplicate, within the bound. The publisher
// sends again in order what failed before the next tick's messages (orderedPublish.ts), so no
// message overtakes an earlier one of its key, and order per key stays checkable.
import { FileBroker } from "@ruststream/file";
import { fileContents } from "../faults/fileContents.js";
import { logCounter } from "../faults/logSince.js";
import { SmallDisk } from "../faults/smallDisk.js";
import { bodyOf } from "../load.js";
import { publishInOrder } from "../orderedPublish.js";
import type { Target } from "./target.js";

/** Room for the load's frames (~150 bytes each) and positions several times over, and no more. */
const diskBytes = (messages: number): number => 16 * 1024 * 1024 + messages * 512;

/** What the service logs when a named consumer's position cannot be stored. */
const POSITION_REFUSED = "could not store the position";

/** What the runtime logs when a retry copy or a dead letter it appends cannot be written. */
const COPY_REFUSED = ["the retry copy failed to publish", "the dead-letter publish failed"];

/**
 * `serviceWrites`: the service has a retry plan, so it is the file's writer (retry copies, dead
 * letters): the load goes in whole before it starts, and the full disk meets the service's appends.
 */
export function fileDiskFullTarget(
  key: string,
  messages: number,
  logFile: string,
  serviceWrites: boolean,
): Target {
  const disk = SmallDisk.mount(diskBytes(messages));
  const inLog = logCounter(logFile);
  const path = `${disk.dir}/chaos.ss`;
  let refused = 0;
  let firstRefusal = "";
  const fills: number[] = [];
  return {
    serviceAddress: path,
    publishBeforeStart: serviceWrites,
    async publishAll(planned, windowMs, log) {
      const broker = await new FileBroker({ path }).connect();
      const publisher = await broker.defaultPublishPolicy().pair(broker);
      await publishInOrder(
        planned,
        async (message) => {
          try {
            await publisher.publish({
              name: key,
              payload: bodyOf(message),
              partitionKey: message.key,
            });
          } catch (error) {
            refused++;
            firstRefusal ||= String(error);
            throw error;
          }
        },
        windowMs,
        log,
      );
      await broker.shutdown();
    },
    restartBroker: undefined,
    ownFaults: {
      "disk-full": async (_fault, { hold }) => {
        fills.push(disk.fill());
        await hold();
        disk.free();
        return { target: "disk" };
      },
    },
    verdict() {
      const failures: string[] = [];
      // Read while the disk is still mounted: every frame whole, nothing half-written left behind.
      const { damage } = fileContents(path, key);
      if (damage !== "") failures.push(`the stream file is damaged: ${damage}`);
      const notes = [
        `disk filled ${fills.length} times (${fills.map((b) => `${Math.round(b / 1024)} KiB`).join(", ")} taken by the filler)`,
        `publishes refused while full, each sent again: ${refused}${firstRefusal === "" ? "" : ` (first: ${firstRefusal})`}`,
      ];
      const positions = inLog(POSITION_REFUSED);
      notes.push(
        `the service's position stores refused while full (stored again by a later ack): ${positions}`,
      );
      const copies = COPY_REFUSED.reduce((sum, text) => sum + inLog(text), 0);
      if (serviceWrites)
        notes.push(`the service's retry copies and dead letters refused: ${copies}`);
      // A position store the full disk refused is a write it reached, as a publish or a copy is
      // (CI seed 2807966287: one fill, 268 position stores refused, no publish then).
      if (fills.length > 0 && refused + copies + positions === 0) {
        failures.push("the disk filled, but no write failed: the fault never reached the writer");
      }
      return { failures, notes };
    },
    async cleanup() {
      disk.unmount();
    },
  };
}
