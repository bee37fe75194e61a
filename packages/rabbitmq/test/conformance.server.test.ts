import { requireEnv } from "@ruststream/tooling-testkit/brokers";
import { describe } from "vitest";
import { RabbitBroker, RabbitQueue, RabbitQuorumQueue, RabbitStream } from "../src/index.js";
import { classicCapabilities, quorumCapabilities, streamCapabilities } from "./capabilities.js";
import { credentialsSuite, everySuite, recordingQueues } from "./conformance.js";

// Every suite on classic, quorum and stream queues against the real node: each call of makeBroker is a new
// client of the same server; each descriptor declares its queue.
const makeBroker = () => new RabbitBroker({ url: requireEnv("RABBITMQ_URL"), declare: true });
const timing = { arrivalMs: 5000, silenceMs: 300 };

describe("classic queue", () => {
  const makeSource = recordingQueues((name) => new RabbitQueue(name));
  everySuite(makeBroker, makeSource, classicCapabilities, timing);
  credentialsSuite(makeSource);
});

describe("quorum queue", () => {
  everySuite(
    makeBroker,
    recordingQueues((name) => new RabbitQuorumQueue(name)),
    quorumCapabilities,
    timing,
  );
});

describe("stream queue", () => {
  everySuite(
    makeBroker,
    recordingQueues((name) => new RabbitStream(name)),
    streamCapabilities,
    timing,
  );
});
