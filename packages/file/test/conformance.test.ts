import { join } from "node:path";
import { uniqueName } from "@ruststream/testing";
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
const namedCapabilities: Capabilities = {
  backlog: "missed",
  ack: true,
  drop: true,
  requeue: true,
  // A file has no delay of its own, and a delivery held back in the process would pin the stored
  // position for the whole delay: the runtime republishes a copy instead.
  delayedRequeue: false,
  durable: true,
  partitionKey: true,
  batches: true,
  seek: true,
  // A transaction's frames are written as one marked run, held by readers until its last frame.
  transactions: true,
  // The reply inbox is a stream key of the same file.
  request: true,
  settleAfterClose: true,
};

// Without a name nothing is stored, as upstream, which has no consumer positions: every settle
// answers `unsupported`, and a new client starts at the end, past what the last one left open.
const unnamedCapabilities: Capabilities = {
  ...namedCapabilities,
  ack: false,
  drop: false,
  requeue: false,
  durable: false,
  // Without a named consumer nothing settles, so nothing settles after a close either.
  settleAfterClose: false,
};

// One subscription per consumer name at a time in a process, so the redelivery-address suite (two
// subscriptions of one key at once) gives each subscription a consumer name of its own: two
// services on one file, each reading every message. It never reads on a new client what an earlier
// one left, so the name need not repeat.
const named = clients("named.ss", "conformance", namedCapabilities);
conformance.routing(named);
conformance.lifecycle(named);
conformance.settlement(named);
conformance.redeliveryAddress({
  ...named,
  makeSource: (name: string) =>
    new FileStream(name, { consumer: uniqueName("address"), commit: "tracked" }),
  fanOut: true,
});
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
// Unnamed readers each read every message.
conformance.redeliveryAddress({ ...unnamed, fanOut: true });
conformance.messageShape(unnamed);
conformance.batches(unnamed);
conformance.seeking({ ...unnamed, unknownPosition: () => FilePosition.sequence(10n ** 15n) });
conformance.transactions(unnamed);
conformance.requestReply(unnamed);
conformance.inProcessTransport(unnamed);
