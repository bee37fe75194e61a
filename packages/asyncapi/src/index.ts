export type { AsyncApiOptions } from "./asyncapiDocument.js";
export { asyncapiDocument } from "./asyncapiDocument.js";
export type {
  AsyncApiDocument,
  BindingsObject,
  Channel,
  Components,
  Info,
  MessageObject,
  Operation,
  OperationReply,
  Reference,
  RetryExtension,
  SchemaObject,
  Server,
  Tag,
} from "./document.js";
export { messagesWithoutSchema } from "./messagesWithoutSchema.js";
export { asyncapiJson, asyncapiYaml } from "./serialize.js";
export type { ViewerOptions } from "./viewer/viewerHtml.js";
export { asyncapiViewerHtml } from "./viewer/viewerHtml.js";
