import { RustStreamError } from "@ruststream/core";
import { scheduleHeaders } from "./names.js";
import type { PublisherHost } from "./publisher.js";

/**
 * Removes the schedule pending on `subject` before it fires, as the server takes it: a purge of the
 * schedule subject in the stream that stores it. Only up to the schedule read first, so a schedule
 * published on the subject meanwhile stays. Resolves `true` when one was removed, `false` when none
 * was pending (a one-time schedule that fired is gone already). A subject holding a message that is
 * not a schedule is refused and loses nothing.
 */
export async function cancelSchedule(host: PublisherHost, subject: string): Promise<boolean> {
  if (typeof subject !== "string" || subject === "" || /[\s*>]/.test(subject)) {
    throw new RustStreamError(
      "invalid-argument",
      `cancelSchedule: ${JSON.stringify(subject)} is not a schedule subject: give the one subject the schedule was published to, without spaces or wildcards`,
    );
  }
  host.assertOpen();
  const stream = await host.link.streamOf(subject);
  const held = await host.link.message(stream, { lastOn: subject });
  host.assertOpen();
  if (held === undefined) return false;
  if (!held.headers.has(scheduleHeaders.schedule)) {
    throw new RustStreamError(
      "invalid-argument",
      `cancelSchedule: the last message on "${subject}" (stream "${stream}", sequence ${held.sequence}) is not a schedule: nothing was removed; give the subject a schedule was published to`,
    );
  }
  const removed = await host.link.purgeSubject(stream, subject, held.sequence + 1n);
  host.assertOpen();
  return removed > 0;
}
