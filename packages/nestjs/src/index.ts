// @ruststream/nestjs: a Nest microservice's handlers on RustStream brokers, and a ClientProxy that
// publishes and requests through them.
export type { ClientRustStreamOptions } from "./clientOptions.js";
export { ClientRustStream } from "./clientRustStream.js";
export type { RustStreamModuleAsyncOptions, RustStreamModuleOptions } from "./moduleOptions.js";
export type { PatternExtras, PatternOptions, PatternSource } from "./patternOptions.js";
export { PayloadRejectionFilter } from "./payloadRejection.js";
export { RustStreamContext } from "./rustStreamContext.js";
export { RustStreamHost } from "./rustStreamHost.js";
export { RustStreamModule } from "./rustStreamModule.js";
export type { RustStreamRecordOptions } from "./rustStreamRecord.js";
export { RustStreamRecord } from "./rustStreamRecord.js";
export { RustStreamServer } from "./rustStreamServer.js";
export type { RustStreamServerOptions } from "./serverOptions.js";
export type { SubscriberOptions } from "./subscriberDecorator.js";
export { Subscriber } from "./subscriberDecorator.js";
export { rustStreamTransport } from "./transport.js";
