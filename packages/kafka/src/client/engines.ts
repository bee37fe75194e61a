import { RustStreamError } from "@ruststream/core";
import type { KafkaEngineName } from "./connectionOptions.js";
import type { AssignmentStrategy, Compression } from "./link.js";
import { otherEngine, packageOf } from "./load.js";

// What each engine can do, checked when a subscription or a publisher is created, so a setting one
// engine cannot honour is refused with the name of the engine that can, instead of being ignored.
// The in-process mode checks the configured engine, so a test refuses what production would.

/** Assignment strategies each engine's client has. */
const assignments: Record<KafkaEngineName, readonly AssignmentStrategy[]> = {
  librdkafka: ["range", "roundrobin", "cooperative-sticky"],
  // kafkajs ships a round-robin assignor only, and has no cooperative (incremental) rebalancing.
  kafkajs: ["roundrobin"],
};

export function checkAssignment(
  engine: KafkaEngineName,
  assignment: AssignmentStrategy | undefined,
): void {
  if (assignment === undefined || assignments[engine].includes(assignment)) return;
  const other = otherEngine(engine);
  throw new RustStreamError(
    "unsupported",
    `assignment "${assignment}" is not available on the ${engine} engine (it has ${assignments[engine].map((a) => `"${a}"`).join(", ")}): use engine "${other}" (${packageOf(other)}), or another assignment`,
  );
}

/** Compression codecs each engine's producer has built in. */
const compressions: Record<KafkaEngineName, readonly Compression[]> = {
  librdkafka: ["none", "gzip", "snappy", "lz4", "zstd"],
  // kafkajs compresses with gzip only unless codecs are plugged into its module by hand.
  kafkajs: ["none", "gzip"],
};

export function checkCompression(
  engine: KafkaEngineName,
  compression: Compression | undefined,
): void {
  if (compression === undefined || compressions[engine].includes(compression)) return;
  const other = otherEngine(engine);
  throw new RustStreamError(
    "unsupported",
    `compression "${compression}" is not available on the ${engine} engine (it has ${compressions[engine].map((c) => `"${c}"`).join(", ")}): use engine "${other}" (${packageOf(other)}), or another compression`,
  );
}

/**
 * `transactional` needs a revocation the engine waits for, and transactional offset commits fenced
 * by the group's generation: otherwise a window can be committed after the partition's next owner
 * read the committed offsets, and that window's outputs would be produced twice. librdkafka has both
 * (its rebalance callback, sendOffsetsToTransaction with the member's group metadata); kafkajs
 * learns of a rebalance only once it has begun, and commits a transaction's offsets by group id
 * alone.
 */
export function checkCommitMode(
  engine: KafkaEngineName,
  commit: "auto" | "tracked" | "transactional",
): void {
  if (commit !== "transactional" || engine === "librdkafka") return;
  throw new RustStreamError(
    "unsupported",
    `commit "transactional" is not available on the ${engine} engine: kafkajs learns of a rebalance only after it has begun and commits a transaction's offsets without the group generation, so a window could be committed after the partition's next owner started, repeating its outputs; use engine "librdkafka" (${packageOf("librdkafka")}), or commit "tracked" (kafkajs's transactional publishing, publisher.transaction(), is available)`,
  );
}
