import { join } from "node:path";
import { type Capabilities, conformance } from "@ruststream/testing/conformance";
import { FileBroker, FilePosition, FileStream } from "../src/index.js";
import { tempDir } from "./tempDir.js";

// Every suite runs against a real .ss file; what a file cannot do is declared, and its scenarios
// show in the tally as skipped with the reason. Each factory call is a new client of the same file,
// as a restarted service would be.
const dir = tempDir("ruststream-file-conformance-");
const timing = { arrivalMs: 5000, silenceMs: 150 };

function clients(file: string, consumer: string | undefined, capabilities: Capabilities) {
  const path = join(dir, file);
  return {
    makeBroker: () => new FileBroker({ path, beaconInterval: 4096 }),
    makeSource: (name: string) =>
      new FileStream(name, consumer === undefined ? {} : { consumer, commit: "tracked" }),
    capabilities,
    timing,
  };
}

// A named consumer under `tracked` stores its position in a sidecar: ack and drop move it, a
// requeue is delivered again ahead of the file, and a new client resumes after what was settled.
// There is no delayed redelivery (the runtime republishes a copy instead).
const namedCapabilities: Capabilities = {
  backlog: "missed",
  ack: true,
  drop: true,
  requeue: true,
  delayedRequeue: false,
  durable: true,
  partitionKey: true,
  batches: true,
  seek: true,
  transactions: false,
  request: false,
};

// Without a name nothing is stored: every settle answers `unsupported`, honestly.
const unnamedCapabilities: Capabilities = {
  ...namedCapabilities,
  ack: false,
  drop: false,
  requeue: false,
  durable: false,
};

// One subscription per consumer name at a time in a process, so redeliveryAddress (two
// subscriptions of one source at once) runs unnamed only.
const named = clients("named.ss", "conformance", namedCapabilities);
conformance.routing(named);
conformance.lifecycle(named);
conformance.settlement(named);
conformance.messageShape(named);
conformance.batches(named);
conformance.seeking({ ...named, unknownPosition: () => FilePosition.sequence(10n ** 15n) });
conformance.transactions(named);
conformance.requestReply(named);
conformance.inProcessTransport(named);

const unnamed = clients("unnamed.ss", undefined, unnamedCapabilities);
conformance.routing(unnamed);
conformance.lifecycle(unnamed);
conformance.settlement(unnamed);
conformance.redeliveryAddress(unnamed);
conformance.messageShape(unnamed);
conformance.batches(unnamed);
conformance.seeking({ ...unnamed, unknownPosition: () => FilePosition.sequence(10n ** 15n) });
conformance.inProcessTransport(unnamed);
