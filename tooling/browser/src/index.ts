export { launchHeadless } from "./headless.js";
export { type Loopback, serveLoopback } from "./loopback.js";
