import { pushCapabilities } from "./capabilities.js";
import { pushSource } from "./sources.js";
import { jetStreamSuites } from "./suites.js";

// JetStream push consumers against the real server, each durable push consumer declared with a
// deliver subject of its own.
jetStreamSuites("JetStream push consumers", pushSource, pushCapabilities);
