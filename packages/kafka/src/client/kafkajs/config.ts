import { nodeTlsSettings } from "@ruststream/core/broker";
import type { ResolvedConnection } from "../connectionOptions.js";
import type { ConfigValue } from "../link.js";
import type { KjsConfig } from "./kafkajs.js";

// kafkajs's options from the broker's settings. kafkajs has three option objects (the client's, a
// producer's, a consumer's): the broker's raw entries go to the client, a publish policy's to its
// producer, a descriptor's to its consumer. A dotted key reaches a nested option
// (`retry.retries`), since raw values are scalars.

/** Sets `key` on `target`, a dotted key through nested objects. */
export function setOption(target: KjsConfig, key: string, value: ConfigValue): void {
  const path = key.split(".");
  let at: KjsConfig = target;
  for (const part of path.slice(0, -1)) {
    const inner = at[part];
    const next: KjsConfig =
      typeof inner === "object" && inner !== null ? { ...(inner as KjsConfig) } : {};
    at[part] = next;
    at = next;
  }
  at[path[path.length - 1]!] = value;
}

export function applyOptions(
  target: KjsConfig,
  entries: ReadonlyArray<readonly [string, ConfigValue]>,
): KjsConfig {
  for (const [key, value] of entries) setOption(target, key, value);
  return target;
}

/** The client's options: servers, identity, SASL, TLS, then the broker's raw entries. */
export function clientConfig(connection: ResolvedConnection, quiet: number): KjsConfig {
  const config: KjsConfig = {
    clientId: connection.clientId,
    brokers: [...connection.brokers],
    // kafkajs logs every retriable error at ERROR (a group coordinator not ready yet, a rebalance);
    // the broker reports what fails as rejections. `logLevel` in config turns it back on.
    logLevel: quiet,
  };
  const { sasl, tls } = connection;
  if (sasl !== undefined) {
    config.sasl = { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password };
  }
  if (tls !== undefined) {
    // kafkajs hands `ssl` to node:tls as is.
    const ssl = nodeTlsSettings(tls);
    config.ssl = Object.keys(ssl).length === 0 ? true : ssl;
  }
  return applyOptions(config, connection.config);
}
