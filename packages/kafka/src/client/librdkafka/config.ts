import { RustStreamError } from "@ruststream/core";
import type { ResolvedConnection } from "../connectionOptions.js";
import type { ConfigValue, ConsumerSettings, ProducerSettings } from "../link.js";
import { FETCH_BACKOFF_MS } from "./pull.js";
import type { RdConfig } from "./rdkafka.js";

// librdkafka's properties from the broker's settings. Only what the package types is set; every
// other property keeps librdkafka's default unless a raw config entry names it, and raw entries are
// applied last (broker, then policy or descriptor), so they win.

const mechanisms = {
  plain: "PLAIN",
  "scram-sha-256": "SCRAM-SHA-256",
  "scram-sha-512": "SCRAM-SHA-512",
} as const;

/** The properties every client of the connection shares: servers, identity, SASL, TLS. */
export function connectionConfig(connection: ResolvedConnection): RdConfig {
  const config: RdConfig = {
    "metadata.broker.list": connection.brokers.join(","),
    "client.id": connection.clientId,
  };
  const { sasl, tls } = connection;
  if (sasl !== undefined || tls !== undefined) {
    config["security.protocol"] =
      sasl === undefined ? "ssl" : tls === undefined ? "sasl_plaintext" : "sasl_ssl";
  }
  if (sasl !== undefined) {
    config["sasl.mechanisms"] = mechanisms[sasl.mechanism];
    config["sasl.username"] = sasl.username;
    config["sasl.password"] = sasl.password;
  }
  if (tls !== undefined) {
    // One PEM text holds every CA: librdkafka reads each certificate in it.
    if (tls.ca !== undefined) config["ssl.ca.pem"] = tls.ca.join("\n");
    if (tls.cert !== undefined) config["ssl.certificate.pem"] = tls.cert;
    if (tls.key !== undefined) config["ssl.key.pem"] = tls.key;
    if (tls.keyPassword !== undefined) config["ssl.key.password"] = tls.keyPassword;
    if (tls.verify === false) config["enable.ssl.certificate.verification"] = false;
  }
  return apply(config, connection.config);
}

export function producerConfig(
  connection: ResolvedConnection,
  settings: ProducerSettings,
): RdConfig {
  const config = connectionConfig(connection);
  config.partitioner = settings.partitioner === "murmur2" ? "murmur2_random" : "consistent_random";
  if (settings.compression !== undefined) config["compression.codec"] = settings.compression;
  // Delivery reports are how a publish learns it landed.
  config.dr_cb = true;
  return apply(config, settings.config);
}

/** A producer with a transactional id (which turns on idempotence, as transactions need). */
export function transactionalProducerConfig(
  connection: ResolvedConnection,
  settings: ProducerSettings,
  transactionalId: string,
): RdConfig {
  const config = producerConfig(connection, settings);
  config["transactional.id"] = transactionalId;
  return config;
}

// Properties a commit mode decides; a raw entry naming one under `tracked` would silently undo it.
const ownedByTracked = ["enable.auto.commit", "enable.auto.offset.store"];

export function consumerConfig(
  connection: ResolvedConnection,
  settings: ConsumerSettings,
): RdConfig {
  for (const [key] of [...connection.config, ...settings.config]) {
    if (settings.commit !== "auto" && ownedByTracked.includes(key)) {
      throw new RustStreamError(
        "invalid-argument",
        `config "${key}" belongs to the commit mode: under commit "${settings.commit}" the broker decides what is committed (${settings.commit === "tracked" ? "each settled position, which librdkafka commits" : "inside the transactions it commits"}), so "${key}" cannot be set; remove it, or use commit "auto"`,
      );
    }
  }
  const config = connectionConfig(connection);
  // The fetch back-off chosen by measuring (pull.ts), unless a raw entry of the broker's set one; a
  // descriptor's entry, applied last, still may.
  config["fetch.queue.backoff.ms"] ??= FETCH_BACKOFF_MS;
  config["group.id"] = settings.group;
  // Both modes commit in the background; they differ in what is stored: `auto` stores each record
  // as it is handed over, `tracked` stores only positions the broker's watermark has reached.
  // Under `transactional` positions are committed only inside the transactions.
  config["enable.auto.commit"] = settings.commit !== "transactional";
  config["enable.auto.offset.store"] = settings.commit === "auto";
  // Records of aborted transactions are never handed over, and none past an open transaction's
  // first record. librdkafka's default, set over the broker's raw entries (a producer property
  // there must not change what consumers read); a descriptor's own entry still may.
  config["isolation.level"] = "read_committed";
  const start = settings.start;
  if (start !== undefined) {
    config["auto.offset.reset"] = start === "earliest" ? "earliest" : "latest";
  }
  if (settings.assignment !== undefined) {
    config["partition.assignment.strategy"] = settings.assignment;
  }
  return apply(config, settings.config);
}

/**
 * A reader's consumer: assigned its partitions by hand, never subscribing, so it joins no group.
 * The binding insists on a `group.id` all the same; nothing is committed under it, so the cluster
 * never records the group.
 */
export function readerConfig(connection: ResolvedConnection, name: string): RdConfig {
  const config = connectionConfig(connection);
  config["fetch.queue.backoff.ms"] ??= FETCH_BACKOFF_MS;
  config["group.id"] = name;
  config["enable.auto.commit"] = false;
  config["enable.auto.offset.store"] = false;
  config["isolation.level"] = "read_committed";
  return config;
}

function apply(config: RdConfig, entries: ReadonlyArray<readonly [string, ConfigValue]>): RdConfig {
  for (const [key, value] of entries) config[key] = value;
  return config;
}
