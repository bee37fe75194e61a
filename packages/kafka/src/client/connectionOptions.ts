import { RustStreamError, type TlsOptions } from "@ruststream/core";
import { type ResolvedTls, resolveTls } from "@ruststream/core/broker";
import type { ConfigValue } from "./link.js";

/** SASL authentication: PLAIN or SCRAM. */
export interface KafkaSaslOptions {
  readonly mechanism: "plain" | "scram-sha-256" | "scram-sha-512";
  readonly username: string;
  readonly password: string;
}

/** Which client library speaks to the cluster. */
export type KafkaEngineName = "librdkafka" | "kafkajs";

/** How the broker reaches the cluster: the settings every client of the broker shares. */
export interface KafkaConnectionOptions {
  /** Bootstrap servers, `host:port`, as a list or comma-separated. */
  readonly brokers: string | readonly string[];
  /**
   * `librdkafka` (default): @confluentinc/kafka-javascript, the native client. `kafkajs`: pure
   * JavaScript, for places without a native build. Install the one you choose; see the README's
   * engine table for what each does.
   */
  readonly engine?: KafkaEngineName;
  /** The client id the cluster sees (default `ruststream`). */
  readonly clientId?: string;
  readonly sasl?: KafkaSaslOptions;
  /** TLS to the brokers: `true` for the system's trust store, or the settings. */
  readonly tls?: boolean | TlsOptions;
}

/** The connection settings after validation: what an engine builds its clients from. */
export interface ResolvedConnection {
  readonly brokers: readonly string[];
  readonly engine: KafkaEngineName;
  readonly clientId: string;
  readonly sasl: KafkaSaslOptions | undefined;
  readonly tls: ResolvedTls | undefined;
  /** The broker's raw client properties, passed to every client it opens. */
  readonly config: ReadonlyArray<readonly [string, ConfigValue]>;
}

const hostPort = /^[^\s:/@]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/;

export function resolveConnection(
  options: KafkaConnectionOptions,
  config: ReadonlyArray<readonly [string, ConfigValue]>,
): ResolvedConnection {
  const list =
    typeof options.brokers === "string"
      ? options.brokers.split(",").map((b) => b.trim())
      : [...(options.brokers ?? [])];
  const brokers = list.filter((b) => b.length > 0);
  if (brokers.length === 0) {
    throw new RustStreamError(
      "invalid-argument",
      'KafkaBroker needs brokers: give the bootstrap servers as "host:port" (for example { brokers: "127.0.0.1:9092" })',
    );
  }
  for (const broker of brokers) {
    if (!hostPort.test(broker)) {
      throw new RustStreamError(
        "invalid-argument",
        `"${broker.includes("@") ? "<a broker with credentials in it>" : broker}" is not a bootstrap server: give "host:port" (credentials go in the sasl option, never in the address)`,
      );
    }
  }
  const engine = options.engine ?? "librdkafka";
  if (engine !== "librdkafka" && engine !== "kafkajs") {
    throw new RustStreamError(
      "invalid-argument",
      `engine: "${String(engine)}"; give "librdkafka" (@confluentinc/kafka-javascript) or "kafkajs"`,
    );
  }
  const sasl = options.sasl;
  if (sasl !== undefined) {
    if (!["plain", "scram-sha-256", "scram-sha-512"].includes(sasl.mechanism)) {
      throw new RustStreamError(
        "invalid-argument",
        `sasl.mechanism: "${String(sasl.mechanism)}"; give "plain", "scram-sha-256" or "scram-sha-512"`,
      );
    }
    if (typeof sasl.username !== "string" || sasl.username.length === 0) {
      throw new RustStreamError("invalid-argument", "sasl.username cannot be empty");
    }
    if (typeof sasl.password !== "string") {
      throw new RustStreamError("invalid-argument", "sasl.password must be a string");
    }
  }
  const tls = resolveTls("tls", options.tls);
  if (tls?.servername !== undefined && engine === "librdkafka") {
    // librdkafka checks the certificate against the address it dialled and has no override.
    throw new RustStreamError(
      "invalid-argument",
      'tls.servername: the librdkafka engine checks the certificate against the broker address it connects to; give the bootstrap servers by a name the certificate carries, or use engine: "kafkajs"',
    );
  }
  return {
    brokers,
    engine,
    clientId: options.clientId ?? "ruststream",
    sasl,
    tls,
    config,
  };
}

/** Reads a raw config record (`{ "linger.ms": 5 }`) into entries, checking the values' types. */
export function configEntries(
  what: string,
  record: Readonly<Record<string, ConfigValue>> | undefined,
): Array<readonly [string, ConfigValue]> {
  if (record === undefined) return [];
  return Object.entries(record).map(([key, value]) => checkedConfig(what, key, value));
}

export function checkedConfig(
  what: string,
  key: string,
  value: ConfigValue,
): readonly [string, ConfigValue] {
  if (typeof key !== "string" || key.length === 0) {
    throw new RustStreamError("invalid-argument", `${what}: a config key cannot be empty`);
  }
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: config "${key}" must be a string, a number or a boolean`,
    );
  }
  return [key, value];
}
