import { RustStreamError } from "@ruststream/core";
import type { PublisherHost } from "./publisher.js";

/** The pinned group an unpin names: the consumer's stream, its durable name, and the group. */
export interface PinnedGroupRef {
  readonly stream: string;
  /** The consumer's name at the server: the JetStreamSubject's `durable`. */
  readonly consumer: string;
  /** The priority group's name, as the JetStreamSubject's `priority.group` gives it. */
  readonly group: string;
}

const what = "unpin";

/**
 * Unpins a pinned priority group (the server's `$JS.API.CONSUMER.UNPIN`): the client it pinned
 * loses the pin, and the server pins the next client whose pull a message finds. Resolves `true`
 * when a client held the pin as the consumer was read just before, `false` when none did.
 */
export async function unpinGroup(host: PublisherHost, ref: PinnedGroupRef): Promise<boolean> {
  if (typeof ref !== "object" || ref === null) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: give { stream, consumer, group } (the consumer's stream, its durable name and its priority group), not ${JSON.stringify(ref)}`,
    );
  }
  for (const field of ["stream", "consumer", "group"] as const) {
    const value = ref[field];
    if (typeof value !== "string" || value === "" || /[\s.*>]/.test(value)) {
      throw new RustStreamError(
        "invalid-argument",
        `${what} ${field}: ${JSON.stringify(value)} is not a ${field} name: give it as the JetStreamSubject names it (no spaces, dots or wildcards)`,
      );
    }
  }
  host.assertOpen();
  const held = await host.link.unpin(ref.stream, ref.consumer, ref.group);
  host.assertOpen();
  return held;
}

/** The server's refusals of an unpin, in the package's words (the server's own say less). */
export const unpinRefused = {
  noStream: (ref: PinnedGroupRef, cause: unknown) =>
    new RustStreamError(
      "invalid-argument",
      `${what}: there is no JetStream stream "${ref.stream}": give the stream the consumer of the pinned group reads (nats stream ls)`,
      { cause },
    ),
  noConsumer: (ref: PinnedGroupRef, cause: unknown) =>
    new RustStreamError(
      "invalid-argument",
      `${what}: the JetStream stream "${ref.stream}" has no consumer "${ref.consumer}": give the durable name of the consumer the pinned group is on (nats consumer ls ${ref.stream})`,
      { cause },
    ),
  noGroup: (ref: PinnedGroupRef, groups: readonly string[]) =>
    new RustStreamError(
      "invalid-argument",
      `${what}: the consumer "${ref.consumer}" on "${ref.stream}" has no priority group "${ref.group}" (${groups.length === 0 ? "it has none" : `its groups: [${groups.join(",")}]`}): give the group its JetStreamSubject's priority option names`,
    ),
  notPinned: (ref: PinnedGroupRef, policy: string) =>
    new RustStreamError(
      "invalid-argument",
      `${what}: the consumer "${ref.consumer}" on "${ref.stream}" has the priority policy "${policy}", not "pinned_client": only a pinned group has a pin to let go of`,
    ),
};
