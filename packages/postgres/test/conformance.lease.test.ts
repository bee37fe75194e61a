import { conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit";
import { PostgresBroker, PostgresQueue } from "../src/index.js";
import { queueCapabilities as capabilities } from "./capabilities.js";

// Leased claims (the default) against the real server. Every scenario uses queues of its own in one
// shared table.
const makeBroker = () =>
  new PostgresBroker({
    url: requireEnv("POSTGRES_URL"),
    table: "conformance_queue",
    ensureSchema: true,
  });
const makeSource = (name: string) => new PostgresQueue(name, { pollMs: 200 });
const timing = { arrivalMs: 5000, silenceMs: 300 };
const factories = { makeBroker, makeSource, capabilities, timing };

conformance.routing(factories);
conformance.lifecycle(factories);
conformance.settlement(factories);
conformance.brokerMovedRetry(factories);
conformance.messageShape(factories);
conformance.batches(factories);
conformance.seeking(factories);
conformance.transactions(factories);
conformance.requestReply(factories);
