// What the NATS interop tests share: the server, our publishes and the crate's, a stream made for
// a test, and a RustStream service consuming a subject (tooling/interop's `serve`).
import { jetstreamManager } from "@nats-io/jetstream";
import { HeaderMap } from "@ruststream/core";
import { RustService } from "@ruststream/tooling-interop";
import { sortedByName } from "@ruststream/tooling-interop/text";
import { bytes, requireEnv } from "@ruststream/tooling-testkit";
import { NatsBroker, NatsPublish } from "../src/index.js";
import { deleteStreams, rawClient } from "./env.live.js";

export const url = () => requireEnv("NATS_URL");
export const live = () => new NatsBroker({ servers: url() });

/** A message as sent: its payload, its headers in order, its partition key. */
export interface Sent {
  readonly payload: Uint8Array;
  readonly headers: readonly (readonly [string, string])[];
  readonly key: string | undefined;
}

/** Publishes `sent` in order through ours, on core NATS or to JetStream. */
export async function tsPublish(subject: string, sent: readonly Sent[], jetStream = false) {
  const connected = await live().connect();
  try {
    const publisher = await new NatsPublish({ jetStream }).pair(connected);
    for (const m of sent) {
      await publisher.publish({
        name: subject,
        payload: m.payload,
        headers: new HeaderMap(m.headers),
        ...(m.key === undefined ? {} : { partitionKey: bytes(m.key) }),
      });
    }
  } finally {
    await connected.shutdown();
  }
}

/** Publishes `sent` in order through the crate (core NATS: a subject a stream stores is stored). */
export async function rustPublish(service: RustService, subject: string, sent: readonly Sent[]) {
  await service.publish(
    ...sent.map((m) => ({
      key: subject,
      payload: m.payload,
      headers: m.headers,
      ...(m.key === undefined ? {} : { partitionKey: m.key }),
    })),
  );
}

const streams: string[] = [];

/** A stream of the shared server storing `subjects`, deleted by `deleteTestStreams`. */
export async function stream(name: string, subjects: string[]): Promise<void> {
  streams.push(name);
  const nc = await rawClient();
  try {
    await (await jetstreamManager(nc)).streams.add({ name, subjects, storage: "memory" });
  } finally {
    await nc.close();
  }
}

/** Deletes the streams the test made. */
export function deleteTestStreams(): Promise<void> {
  return deleteStreams(...streams.splice(0));
}

/** A RustStream service consuming `key`: a core subject, in a queue group, or a stream's. */
export function rustConsumer(
  key: string,
  options: {
    stream?: string;
    group?: string;
    queue?: boolean;
    maxAttempts?: number;
    deadLetter?: string;
    reply?: boolean;
  } = {},
) {
  return RustService.start({
    transport: "nats",
    url: url(),
    consume: {
      key,
      group: options.group ?? "rust",
      max_attempts: options.maxAttempts ?? 3,
      dead_letter: options.deadLetter ?? `${key}-dlq`,
      ...(options.stream === undefined ? {} : { stream: options.stream }),
      ...(options.queue === undefined ? {} : { queue: options.queue }),
      ...(options.reply === undefined ? {} : { reply: options.reply }),
    },
  });
}

/** The headers a message arrives with: those sent and its partition key as the crate's header. */
export const withKey = (m: Sent) =>
  sortedByName([
    ...m.headers,
    ...(m.key === undefined ? [] : [["nats-partition-key", m.key] as const]),
  ]);
