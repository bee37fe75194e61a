import { headerNames } from "@ruststream/core";

/**
 * The names this broker writes on its wire. The channel wire has no native key, so the partition
 * key travels in core's default header; a broker with a native key (Kafka's record key) maps it
 * there instead, and one that shares topics with RustStream uses RustStream's names.
 */
export const channelHeaderNames = {
  partitionKey: headerNames.partitionKey,
} as const;
