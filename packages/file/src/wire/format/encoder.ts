import { encodeBeacon, markersPerBeacon } from "./beacon.js";
import { concatBytes } from "./bytes.js";
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  END_OF_STREAM_PAYLOAD,
  HEADER_SIZE,
  SEA_STREAMER_INTERNAL,
} from "./constants.js";
import { runningChecksumUpdate } from "./crc.js";
import { fileError } from "./errors.js";
import { encodeFrame, validateMessage } from "./frame.js";
import { encodeHeader, validateBeaconInterval } from "./header.js";
import { FrameSlab } from "./slab.js";
import type { FileHeader, Marker, StreamId, StreamMessage, StreamState } from "./types.js";

export interface EncoderOptions {
  /** Writes of a larger payload fail with `PAYLOAD_TOO_LARGE`. */
  readonly maxMessageBytes?: number;
}

interface Entry extends StreamId {
  state: StreamState;
}

const EOS_PAYLOAD = new TextEncoder().encode(END_OF_STREAM_PAYLOAD);
const CRC_INIT = 0xffff;

/** Upstream keeps streams in a `BTreeMap<(StreamKey, ShardId)>`: key bytes, then shard. */
function compareStreams(a: StreamId, b: StreamId): number {
  if (a.streamKey !== b.streamKey) return a.streamKey < b.streamKey ? -1 : 1;
  return a.shard < b.shard ? -1 : a.shard > b.shard ? 1 : 0;
}

/**
 * The writer as a pure state machine: it turns messages into the exact bytes sea-streamer-file's
 * `MessageSink` would append, beacons included, and tracks the file offset. It performs no I/O;
 * the caller appends each returned chunk in order.
 */
export class FileEncoder {
  readonly beaconInterval: number;
  readonly #maxMessageBytes: number;
  readonly #markers: number;
  /** Sorted the way upstream iterates its map, so beacon markers rotate identically. */
  readonly #streams: Entry[] = [];
  #offset: number;
  /** Upstream counts markers written, not beacons, to pick where the next rotation starts. */
  #markerCount = 0;
  readonly #slab = new FrameSlab();
  readonly #allocate = (size: number) => this.#slab.allocate(size);

  private constructor(beaconInterval: number, offset: number, options: EncoderOptions) {
    validateBeaconInterval(beaconInterval);
    this.beaconInterval = beaconInterval;
    this.#offset = offset;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#markers = markersPerBeacon(beaconInterval);
  }

  /** Starts a new file: the returned bytes are its header (plus an empty beacon if interval is 128). */
  static create(
    header: FileHeader,
    options: EncoderOptions = {},
  ): { encoder: FileEncoder; bytes: Uint8Array } {
    const bytes = encodeHeader(header);
    const encoder = new FileEncoder(header.beaconInterval, HEADER_SIZE, options);
    return { encoder, bytes: concatBytes([bytes, encoder.#emptyBeaconIfAligned()]) };
  }

  /**
   * Continues an existing file at `offset` (the end of its last good frame). Like upstream, when
   * that offset is an interval boundary an empty beacon is written first, replacing whatever
   * beacon the old tail had there. Stream states start empty: seed them with `seedStream`.
   */
  static resume(
    beaconInterval: number,
    offset: number,
    options: EncoderOptions = {},
  ): { encoder: FileEncoder; bytes: Uint8Array } {
    if (!Number.isSafeInteger(offset) || offset < HEADER_SIZE) {
      throw fileError(
        "INVALID_ARGUMENT",
        `Cannot resume at byte ${offset}: it is inside the header`,
      );
    }
    const encoder = new FileEncoder(beaconInterval, offset, options);
    return { encoder, bytes: encoder.#emptyBeaconIfAligned() };
  }

  /** File offset the next chunk will be written at. */
  get offset(): number {
    return this.#offset;
  }

  /** The state each stream's next beacon marker would carry. */
  streamState(stream: StreamId): StreamState | undefined {
    return this.#find(stream)?.state;
  }

  streams(): ReadonlyArray<StreamId & { readonly state: StreamState }> {
    return this.#streams.map((e) => ({ streamKey: e.streamKey, shard: e.shard, state: e.state }));
  }

  /** Sets a stream's state recovered from the file, before its first write in this session. */
  seedStream(stream: StreamId, state: StreamState): void {
    const entry = this.#find(stream);
    if (entry) entry.state = state;
    else this.#insert({ streamKey: stream.streamKey, shard: stream.shard, state });
  }

  /**
   * Encodes one message. Everything is validated first: on error nothing is returned and the
   * state is unchanged, so a failed write never leaves a partial frame.
   */
  write(message: StreamMessage): Uint8Array {
    validateMessage(message, this.#maxMessageBytes);
    return this.#write(message);
  }

  /** The end-of-stream frame readers stop at. Upstream writes it only when asked to. */
  end(timestamp: number): Uint8Array {
    return this.write({
      streamKey: SEA_STREAMER_INTERNAL,
      shard: 0n,
      seq: 0n,
      timestamp,
      payload: EOS_PAYLOAD,
    });
  }

  #write(message: StreamMessage): Uint8Array {
    const { bytes: frame, checksum } = encodeFrame(message, this.#allocate);
    // State is updated before splicing: a beacon inside this frame already counts it.
    const entry = this.#find(message);
    if (entry) {
      const s = entry.state;
      entry.state = {
        seq: message.seq > s.seq ? message.seq : s.seq,
        timestamp: Math.max(message.timestamp, s.timestamp),
        runningChecksum: runningChecksumUpdate(s.runningChecksum, checksum),
      };
    } else {
      this.#insert({
        streamKey: message.streamKey,
        shard: message.shard,
        state: {
          seq: message.seq,
          timestamp: message.timestamp,
          runningChecksum: runningChecksumUpdate(CRC_INIT, checksum),
        },
      });
    }
    const interval = this.beaconInterval;
    const parts: Uint8Array[] = [];
    let rest = 0;
    while (rest < frame.length) {
      const room = interval - (this.#offset % interval);
      const take = Math.min(room, frame.length - rest);
      parts.push(frame.subarray(rest, rest + take));
      rest += take;
      this.#offset += take;
      if (this.#offset % interval === 0) {
        const beacon = encodeBeacon(frame.length - rest, this.#rotation());
        parts.push(beacon);
        this.#offset += beacon.length;
      }
    }
    return concatBytes(parts);
  }

  /** Upstream: `iter().skip(count % n).chain(iter()).take(min(n, slots))`, count in markers. */
  #rotation(): Marker[] {
    const n = this.#streams.length;
    const take = Math.min(n, this.#markers);
    const markers: Marker[] = [];
    if (take === 0) return markers;
    const first = this.#markerCount % n;
    for (let i = 0; i < take; i++) {
      const e = this.#streams[(first + i) % n]!;
      markers.push({ streamKey: e.streamKey, shard: e.shard, ...e.state });
    }
    this.#markerCount += take;
    return markers;
  }

  #emptyBeaconIfAligned(): Uint8Array {
    if (this.#offset % this.beaconInterval !== 0) return new Uint8Array(0);
    const beacon = encodeBeacon(0, []);
    this.#offset += beacon.length;
    return beacon;
  }

  #find(stream: StreamId): Entry | undefined {
    const i = this.#search(stream);
    const e = this.#streams[i];
    return e && compareStreams(e, stream) === 0 ? e : undefined;
  }

  #insert(entry: Entry): void {
    this.#streams.splice(this.#search(entry), 0, entry);
  }

  /** First index whose stream is not below `stream`. */
  #search(stream: StreamId): number {
    let lo = 0;
    let hi = this.#streams.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareStreams(this.#streams[mid]!, stream) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
