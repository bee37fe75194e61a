import { ephemeralPushCapabilities, pushCapabilities } from "./capabilities.js";
import { ephemeralPushSource, pushSource } from "./sources.js";
import { jetStreamSuites } from "./suites.js";

// JetStream push consumers against the real server, each declared with a deliver subject of its
// own: a durable one per suite subject, and an ephemeral one per subscription.
jetStreamSuites("JetStream push consumers", pushSource, pushCapabilities);
jetStreamSuites(
  "JetStream ephemeral push consumers",
  ephemeralPushSource,
  ephemeralPushCapabilities,
);
