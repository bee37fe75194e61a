// Finding a topic's broker. PARTITIONED_METADATA says how many partitions a topic has (0: not
// partitioned); LOOKUP, asked of any broker, answers Connect (this broker, or this one through the
// proxy you came by) or Redirect (ask that broker instead, passing its authoritative flag back), up
// to a limit so two brokers that disagree cannot bounce a client forever.
import { RustStreamError } from "@ruststream/core";
import { CommandType, LookupType, PartitionMetadataResult } from "./commands/enums.js";
import type { Connection } from "./connection.js";
import { ProtocolFailure, serverFailure } from "./errors.js";
import { type BrokerAddress, parseBrokerUrl } from "./serviceUrl.js";

/** Where connections come from: the client's pool. */
export interface ConnectionSource {
  /** The connection to `logical` through `physical` (the same address unless through a proxy). */
  connection(logical: BrokerAddress, physical: BrokerAddress): Promise<Connection>;
  /** One address of the service URL (several hosts take turns). */
  serviceAddress(): BrokerAddress;
}

/** Where a topic is served: its broker, and the address the socket goes to. */
export interface LookupResult {
  readonly logical: BrokerAddress;
  readonly physical: BrokerAddress;
}

/** The redirect limit of the Go and Java clients. */
export const DEFAULT_MAX_REDIRECTS = 20;

/** The number of partitions of `topic` (a full name); 0 for a non-partitioned topic. */
export async function partitionedTopicMetadata(
  source: ConnectionSource,
  topic: string,
): Promise<number> {
  const service = source.serviceAddress();
  const connection = await source.connection(service, service);
  const requestId = connection.newRequestId();
  const answer = await connection.request(
    requestId,
    { type: CommandType.PARTITIONED_METADATA, partitionMetadata: { topic, requestId } },
    `partitioned metadata of ${topic}`,
  );
  const response = answer.partitionMetadataResponse!;
  if (response.response === PartitionMetadataResult.Failed)
    throw serverFailure(
      `partitioned metadata of ${topic}`,
      response.error ?? 0,
      response.message ?? "",
    );
  return response.partitions ?? 0;
}

/** Finds the broker serving `topic` (a full name, or one partition's), following redirects. */
export async function lookupTopic(
  source: ConnectionSource,
  topic: string,
  options: { maxRedirects?: number; listenerName?: string } = {},
): Promise<LookupResult> {
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const service = source.serviceAddress();
  let target: LookupResult = { logical: service, physical: service };
  let authoritative = false;
  for (let redirects = 0; ; redirects++) {
    const connection = await source.connection(target.logical, target.physical);
    const requestId = connection.newRequestId();
    const answer = await connection.request(
      requestId,
      {
        type: CommandType.LOOKUP,
        lookupTopic: {
          topic,
          requestId,
          authoritative,
          ...(options.listenerName === undefined
            ? {}
            : { advertisedListenerName: options.listenerName }),
        },
      },
      `lookup of ${topic}`,
    );
    const response = answer.lookupTopicResponse!;
    if (response.response === LookupType.Failed || response.response === undefined)
      throw serverFailure(`lookup of ${topic}`, response.error ?? 0, response.message ?? "");
    const url = service.tls ? response.brokerServiceUrlTls : response.brokerServiceUrl;
    if (url === undefined || url === "")
      throw new RustStreamError(
        "broker-failure",
        `lookup of ${topic}: the broker answered without a ${service.tls ? "TLS " : ""}broker URL`,
        { cause: new ProtocolFailure("lookup answer without a broker URL") },
      );
    const broker = parseBrokerUrl(url);
    // proxy_through_service_url: keep the socket going where this lookup went (a proxy forwards to
    // `broker` there). The standalone broker sets it on its own answers too, which then means the
    // same address.
    target = {
      logical: broker,
      physical: response.proxyThroughServiceUrl ? target.physical : broker,
    };
    if (response.response === LookupType.Connect) return target;
    if (redirects + 1 > maxRedirects)
      throw new RustStreamError(
        "broker-failure",
        `lookup of ${topic}: more than ${maxRedirects} redirects (last to ${broker.url}); the brokers disagree on who owns the topic`,
        { cause: new ProtocolFailure("redirect limit reached") },
      );
    authoritative = response.authoritative ?? false;
  }
}
