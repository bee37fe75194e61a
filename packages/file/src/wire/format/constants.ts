/** The header is a fixed 128 bytes whatever the file name length. */
export const HEADER_SIZE = 128;
export const MAGIC_0 = 0x53; // 'S'
export const MAGIC_1 = 0x73; // 's'
export const FORMAT_VERSION = 0x01;
/** Written after headers, beacons and frames so the file stays readable in a text editor. */
export const CR = 0x0d;

/** Upstream default (`DEFAULT_BEACON_INTERVAL`): 1 MiB. */
export const DEFAULT_BEACON_INTERVAL = 1024 * 1024;
/** Readers assume a beacon interval holds at least the header. */
export const MIN_BEACON_INTERVAL = HEADER_SIZE;

export const MAX_STREAM_KEY_LENGTH = 249;
/** Reserved key of the end-of-stream frame; hidden from wildcard subscribers upstream. */
export const SEA_STREAMER_INTERNAL = "SEA_STREAMER_INTERNAL";
export const SEA_STREAMER_WILDCARD = "SEA_STREAMER_WILDCARD";
/** Payload of the end-of-stream frame (`SEA_STREAMER_INTERNAL`, shard 0, seq 0). */
export const END_OF_STREAM_PAYLOAD = "EOS";

/** A payload length is a U32 on the wire. */
export const MAX_PAYLOAD_LIMIT = 0xffff_ffff;
/** Our own default cap on one payload; the format allows up to 4 GiB but Node buffers do not. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export const MAX_U64 = (1n << 64n) - 1n;
/**
 * Largest timestamp the Rust reader accepts: it converts to `time::OffsetDateTime`, whose range
 * ends at 9999-12-31T23:59:59.999Z. A later value makes sea-streamer-file fail the whole read.
 */
export const MAX_TIMESTAMP_MS = 253_402_300_799_999;
