// The file broker's public API, by name. The `.ss` codec and the low-level reader and writer are
// the other entry, `@ruststream/file/format` (formatEntry.ts); a name is in one entry, never both.
// The layout every broker package follows:
//   broker.ts         the broker: configuration only, describeServer, connect, connectInProcess
//   connection.ts     its connection and its closed witness
//   options.ts        the options the broker takes and its connection reads
//   sources.ts        the descriptor subscribe takes (FileStream)
//   publishPolicy.ts  the publish policy
//   publisher.ts      the live publisher
//   position.ts       where a delivery sits in its stream
//   names.ts          the names it writes into the file
//   stream/           the one subscription mode: its subscription, delivery, and tracked position
//   wire/             the `.ss` format, the file I/O and RustStream's header envelope
export { FileBroker } from "./broker.js";
export type { ClosedFileBroker, ConnectedFileBroker } from "./connection.js";
export { PARTITION_KEY_HEADER, PRIME_STREAM_KEY, SEQUENCE_HEADER } from "./names.js";
export type { FileBrokerOptions } from "./options.js";
export { FilePosition, type FilePositionTarget } from "./position.js";
export { FilePublisher } from "./publisher.js";
export { FilePublish } from "./publishPolicy.js";
export { FileStream, type FileStreamOptions } from "./sources.js";
export { sidecarPath } from "./stream/sidecar.js";
export type { FileDelivery } from "./stream/streamDelivery.js";
export type { FileSubscription } from "./stream/streamSubscription.js";
