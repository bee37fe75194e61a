// @ruststream/health: liveness and readiness of a RustStream app, and the HTTP server for them.
export type { Health } from "./health.js";
export { health } from "./health.js";
export type { WatchedState } from "./healthWatch.js";
export type { HttpServer, ServeHttpOptions } from "./serveHttp.js";
export { serveHttp } from "./serveHttp.js";
