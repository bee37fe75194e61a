export type { Unwrapped } from "./broker/envelope.js";
export { decodeEnvelope, encodeEnvelope } from "./broker/envelope.js";
export {
  type ClosedFileBroker,
  ConnectedFileBroker,
  FileBroker,
  type FileBrokerOptions,
} from "./broker/fileBroker.js";
export { FileDelivery, SEQUENCE_HEADER } from "./broker/fileDelivery.js";
export { FilePosition, type FilePositionTarget } from "./broker/filePosition.js";
export { FilePublish, FilePublisher } from "./broker/filePublisher.js";
export { FileStream, type FileStreamOptions } from "./broker/fileStream.js";
export { FileSubscription } from "./broker/fileSubscription.js";
export { sidecarPath } from "./broker/sidecar.js";
export { encodeBeacon, markersPerBeacon } from "./format/beacon.js";
export {
  DEFAULT_BEACON_INTERVAL,
  DEFAULT_MAX_PAYLOAD_BYTES,
  END_OF_STREAM_PAYLOAD,
  HEADER_SIZE,
  MAX_STREAM_KEY_LENGTH,
  MAX_TIMESTAMP_MS,
  SEA_STREAMER_INTERNAL,
  SEA_STREAMER_WILDCARD,
} from "./format/constants.js";
export { crc16Cdma2000, crc16Update, runningChecksumUpdate } from "./format/crc.js";
export {
  type DecodedFile,
  type DecodedItem,
  type DecodeOutcome,
  type DecoderOptions,
  decodeFile,
  isEndOfStream,
  StreamDecoder,
} from "./format/decoder.js";
export { type EncoderOptions, FileEncoder } from "./format/encoder.js";
export { StreamFileError, type StreamFileErrorCode } from "./format/errors.js";
export { encodeFrame, frameSize, validateMessage } from "./format/frame.js";
export {
  decodeHeader,
  encodeHeader,
  isSeaStreamerFile,
  MAX_FILE_NAME_BYTES,
} from "./format/header.js";
export { type LocateTarget, locateStart } from "./format/locate.js";
export { bufferReader, type RandomAccessReader } from "./format/reader.js";
export {
  findResumePoint,
  type RecoveredStream,
  type ResumeOptions,
  type ResumePoint,
  recoverStreams,
} from "./format/resume.js";
export { isValidStreamKey, validateStreamKey } from "./format/streamKey.js";
export type {
  Beacon,
  DecodedMessage,
  FileHeader,
  Marker,
  StreamId,
  StreamMessage,
  StreamState,
} from "./format/types.js";
export {
  type ConsumerOptions,
  FileConsumer,
  PRIME_STREAM_KEY,
  type ReadFrom,
} from "./io/consumer.js";
export { fileReader } from "./io/fileReader.js";
export { lockPathOf } from "./io/lockFile.js";
export { FileProducer, type ProducerOptions } from "./io/producer.js";
export type { SendReceipt } from "./io/sharedWriter.js";
