// The three transports and the three consumer rows of each; what the generator does for a mode.
import { fullApp } from "./fullApp.js";
import type { GeneratorProcess } from "./generatorProcess.js";
import { brokerList, listSource, rawList } from "./lists.js";
import { brokerPubSub, pubsubSource, rawPubSub } from "./pubsub.js";
import { brokerStream, rawStream, streamSource } from "./streams.js";
import type { Consumer } from "./trial.js";

export type ModeName = "stream" | "list" | "pubsub";
export type VariantName = "raw ioredis" | "broker alone" | "full app";

export const variantNames: readonly VariantName[] = ["raw ioredis", "broker alone", "full app"];

/**
 * Messages a pub/sub publisher may be ahead of what its subscriber reported: about 2 MB on the
 * wire, under Redis's pubsub output-buffer soft limit (8 MB) and the package's 10 000-message
 * buffer, so nothing is ever dropped, yet far more than one progress report (512), so the
 * subscriber never waits on the generator.
 */
export const publishWindow = 4096;

export interface Mode {
  readonly name: ModeName;
  readonly label: string;
  /** Pre-fills the key (streams, lists); pub/sub publishes during the row instead. */
  readonly fill:
    | ((generator: GeneratorProcess, key: string, count: number) => Promise<unknown>)
    | undefined;
  readonly consumers: Readonly<Record<VariantName, Consumer>>;
}

export const modes: Readonly<Record<ModeName, Mode>> = {
  stream: {
    name: "stream",
    label: "stream, XREADGROUP COUNT 64, XACK each",
    fill: (generator, key, count) => generator.run({ kind: "fill-stream", key, count }),
    consumers: {
      "raw ioredis": rawStream,
      "broker alone": brokerStream,
      "full app": fullApp(streamSource),
    },
  },
  list: {
    name: "list",
    label: "reliable list, LMOVE x64 (BLMOVE when empty) into processing, LREM each",
    fill: (generator, key, count) => generator.run({ kind: "fill-list", key, count }),
    consumers: {
      "raw ioredis": rawList,
      "broker alone": brokerList,
      "full app": fullApp(listSource),
    },
  },
  pubsub: {
    name: "pubsub",
    label: "pub/sub, SUBSCRIBE, publisher under credit",
    fill: undefined,
    consumers: {
      "raw ioredis": rawPubSub,
      "broker alone": brokerPubSub,
      "full app": fullApp(pubsubSource),
    },
  },
};

export function isModeName(name: string): name is ModeName {
  return name === "stream" || name === "list" || name === "pubsub";
}
