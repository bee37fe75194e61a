import { jetStreamCapabilities } from "./capabilities.js";
import { jetStreamSource } from "./sources.js";
import { jetStreamSuites } from "./suites.js";

// JetStream pull consumers against the real server.
jetStreamSuites("JetStream", jetStreamSource, jetStreamCapabilities);
