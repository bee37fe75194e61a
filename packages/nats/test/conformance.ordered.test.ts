import { orderedCapabilities } from "./capabilities.js";
import { orderedSource } from "./sources.js";
import { jetStreamSuites } from "./suites.js";

// JetStream ordered consumers against the real server.
jetStreamSuites("JetStream ordered", orderedSource, orderedCapabilities);
