// `@ruststream/file/format`: SeaStreamer's `.ss` format without the broker. The codec (header,
// frames, beacons, checksums, the decoders and the encoder), the reader and writer over a file
// (FileConsumer, FileProducer), resuming a file, and RustStream's `rs1:`/`rs2:` header envelope,
// for tools that read or write stream files directly. The broker is the main entry.
export type { Unwrapped } from "./wire/envelope.js";
export { decodeEnvelope, encodeEnvelope } from "./wire/envelope.js";
export { encodeBeacon, markersPerBeacon } from "./wire/format/beacon.js";
export {
  DEFAULT_BEACON_INTERVAL,
  DEFAULT_MAX_MESSAGE_BYTES,
  END_OF_STREAM_PAYLOAD,
  HEADER_SIZE,
  MAX_STREAM_KEY_LENGTH,
  MAX_TIMESTAMP_MS,
  SEA_STREAMER_INTERNAL,
  SEA_STREAMER_WILDCARD,
} from "./wire/format/constants.js";
export { crc16Cdma2000, crc16Update, runningChecksumUpdate } from "./wire/format/crc.js";
export {
  type DecodedFile,
  type DecodedItem,
  type DecodeOutcome,
  type DecoderOptions,
  decodeFile,
  isEndOfStream,
  StreamDecoder,
} from "./wire/format/decoder.js";
export { type EncoderOptions, FileEncoder } from "./wire/format/encoder.js";
export {
  type FileErrorCode,
  type FileErrorDetail,
  fileErrorDetail,
} from "./wire/format/errors.js";
export { encodeFrame, frameSize, validateMessage } from "./wire/format/frame.js";
export {
  decodeHeader,
  encodeHeader,
  isSeaStreamerFile,
  MAX_FILE_NAME_BYTES,
} from "./wire/format/header.js";
export { type LocateTarget, locateStart } from "./wire/format/locate.js";
export { bufferReader, type RandomAccessReader } from "./wire/format/reader.js";
export {
  findResumePoint,
  type RecoveredStream,
  type ResumeOptions,
  type ResumePoint,
  recoverStreams,
} from "./wire/format/resume.js";
export { isValidStreamKey, validateStreamKey } from "./wire/format/streamKey.js";
export type {
  Beacon,
  DecodedMessage,
  FileHeader,
  Marker,
  StreamId,
  StreamMessage,
  StreamState,
} from "./wire/format/types.js";
export {
  type ConsumerOptions,
  FileConsumer,
  type ReadFrom,
} from "./wire/io/consumer.js";
export { fileReader } from "./wire/io/fileReader.js";
export { lockPathOf } from "./wire/io/lockFile.js";
export { FileProducer, type ProducerOptions } from "./wire/io/producer.js";
export type { SendReceipt } from "./wire/io/sharedWriter.js";
export { readMark, type TransactionMark } from "./wire/transactionMark.js";
