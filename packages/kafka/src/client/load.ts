import { RustStreamError } from "@ruststream/core";
import { runtimeName, runtimeTitle } from "@ruststream/core/broker";
import type { KafkaEngineName } from "./connectionOptions.js";

// Both clients are optional peer dependencies: a service installs the one its engine needs, and
// nothing loads either until a broker connects. A missing one is named, with the other engine as
// the alternative, instead of surfacing as a bare module-not-found from deep inside connect().

const packages: Record<KafkaEngineName, string> = {
  librdkafka: "@confluentinc/kafka-javascript",
  kafkajs: "kafkajs",
};

/** The npm package an engine needs. */
export function packageOf(engine: KafkaEngineName): string {
  return packages[engine];
}

/** The engine that is not `engine`, for messages that point to it. */
export function otherEngine(engine: KafkaEngineName): KafkaEngineName {
  return engine === "librdkafka" ? "kafkajs" : "librdkafka";
}

function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = String((error as { message?: unknown } | undefined)?.message ?? "");
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && message.includes(name);
}

/**
 * Imports an engine's client, CommonJS or not, as its `module.exports`. `importer` is the
 * `import()` itself, written at the call site so a bundler sees a literal specifier.
 */
export async function loadClient<T>(
  engine: KafkaEngineName,
  importer: () => Promise<unknown>,
): Promise<T> {
  const name = packages[engine];
  refuseOffNode(engine);
  let loaded: unknown;
  try {
    loaded = await importer();
  } catch (error) {
    if (isMissing(error, name)) {
      throw new RustStreamError(
        "unsupported",
        `the Kafka engine "${engine}" needs the package ${name}, which is not installed: install it (npm install ${name}), or choose engine: "${otherEngine(engine)}" (npm install ${packageOf(otherEngine(engine))})`,
        { cause: error },
      );
    }
    throw new RustStreamError(
      "broker-failure",
      `the Kafka engine "${engine}" could not load ${name}: ${(error as Error).message}${engine === "librdkafka" ? ' (a native build that failed or is missing shows here: reinstall it, or choose engine: "kafkajs")' : ""}`,
      { cause: error },
    );
  }
  // A CommonJS module imported from ESM is its exports under `default`.
  const module = loaded as { default?: unknown };
  return (module.default ?? loaded) as T;
}

/**
 * librdkafka's addon (@confluentinc/kafka-javascript) is built against Node's own ABI with nan, not
 * Node-API: Bun refuses it ("compiled against a different Node.js ABI version") and Deno loads
 * Node-API addons only. Refused here, before the import, with the engine that runs there, rather
 * than with the loader's error from inside connect().
 */
function refuseOffNode(engine: KafkaEngineName): void {
  if (engine !== "librdkafka" || runtimeName() === "node") return;
  throw new RustStreamError(
    "unsupported",
    `the Kafka engine "librdkafka" does not run on ${runtimeTitle()}: ${packages.librdkafka} is a native addon built for Node's own ABI, which ${runtimeName() === "bun" ? "Bun" : "Deno"} does not load; choose engine: "kafkajs" (npm install kafkajs), which runs on Node, Bun and Deno`,
  );
}
