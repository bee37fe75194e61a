import { batches } from "./conformance/batches.js";
import { credentials } from "./conformance/credentials.js";
import { inProcessTransport } from "./conformance/inProcess.js";
import { lifecycle } from "./conformance/lifecycle.js";
import { messageShape } from "./conformance/messageShape.js";
import { requestReply } from "./conformance/requestReply.js";
import { brokerMovedRetry, redeliveryAddress } from "./conformance/retry.js";
import { routing } from "./conformance/routing.js";
import { seeking } from "./conformance/seeking.js";
import { settlement } from "./conformance/settlement.js";
import { transactions } from "./conformance/transactions.js";

/**
 * The broker conformance suites. Each takes factories and registers vitest tests; call them at the
 * top level of a test file. Run every suite that fits the broker's capabilities, against the real
 * server.
 */
export const conformance = {
  routing,
  lifecycle,
  settlement,
  redeliveryAddress,
  brokerMovedRetry,
  messageShape,
  batches,
  seeking,
  transactions,
  requestReply,
  credentials,
  inProcessTransport,
} as const;
