/** What a producer hands to the encoder: one message of one stream. */
export interface StreamMessage {
  readonly streamKey: string;
  /** u64 on the wire. Upstream's high-level producer always writes shard 0. */
  readonly shard: bigint;
  /** u64 on the wire; the writer does not assign it, the producer does. */
  readonly seq: bigint;
  /** Milliseconds since the Unix epoch (upstream truncates nanoseconds to ms). */
  readonly timestamp: number;
  readonly payload: Uint8Array;
}

/** A message as read back, with where it sits in the file. */
export interface DecodedMessage extends StreamMessage {
  /** CRC-16/CDMA2000 of the payload, as stored (and verified). */
  readonly checksum: number;
  /** File offset of the frame's first byte. */
  readonly offset: number;
  /** File offset just past the frame, beacons spliced into it included. */
  readonly end: number;
}

/** One stream's summary inside a beacon. */
export interface Marker {
  readonly streamKey: string;
  readonly shard: bigint;
  /** Highest sequence number written to this stream so far (the spliced frame included). */
  readonly seq: bigint;
  /** Highest timestamp so far, in ms. */
  readonly timestamp: number;
  /** CRC-16/CDMA2000 chained over the big-endian payload checksums, in write order. */
  readonly runningChecksum: number;
}

export interface Beacon {
  /** File offset, always `index * beaconInterval`. */
  readonly offset: number;
  /** Beacon index; 0 would be the header. */
  readonly index: number;
  /** Bytes of the frame being written that follow this beacon (0 when it sits between frames). */
  readonly remaining: number;
  readonly markers: readonly Marker[];
  /** Encoded size in bytes. */
  readonly size: number;
}

/** The 128-byte file header. */
export interface FileHeader {
  /** Upstream writes the basename of the path; at most 111 UTF-8 bytes fit. */
  readonly fileName: string;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  /** Bytes between beacons; at least 128. */
  readonly beaconInterval: number;
}

/** A stream is a (stream key, shard) pair; the file format keeps state per pair. */
export interface StreamId {
  readonly streamKey: string;
  readonly shard: bigint;
}

/** Per-stream writer state: what the next beacon marker for this stream says. */
export interface StreamState {
  readonly seq: bigint;
  readonly timestamp: number;
  readonly runningChecksum: number;
}
