import { join } from "node:path";
import { conformance } from "@ruststream/testing";
import { FileBroker, FilePosition, FileStream } from "../src/index.js";
import { tempDir } from "./tempDir.js";

// Every suite that fits a file runs against a real .ss file. Each factory call is a new client of
// the same file, as a restarted service would be.
const dir = tempDir("ruststream-file-conformance-");
const timing = { arrivalMs: 5000, silenceMs: 150 };

function clients(file: string, consumer: string | undefined) {
  const path = join(dir, file);
  return {
    makeBroker: () => new FileBroker({ path, beaconInterval: 4096 }),
    makeSource: (name: string) =>
      new FileStream(name, consumer === undefined ? {} : { consumer, commit: "tracked" }),
    timing,
  };
}

// A named consumer under `tracked`: settles, requeues, and resumes on a new client. One
// subscription per consumer name at a time in a process, so redeliveryAddress (two subscriptions
// of one source at once) runs unnamed only.
const named = clients("named.ss", "conformance");
conformance.routing({ ...named, backlog: "missed" });
conformance.lifecycle(named);
conformance.settlement(named);
conformance.messageShape(named);
conformance.batches(named);
conformance.seeking({ ...named, unknownPosition: () => FilePosition.sequence(10n ** 15n) });
conformance.inProcessTransport(named);

// Without a name, nothing is stored: every settle answers `unsupported`, honestly.
const unnamed = clients("unnamed.ss", undefined);
conformance.routing({ ...unnamed, backlog: "missed" });
conformance.lifecycle(unnamed);
conformance.redeliveryAddress(unnamed);
conformance.messageShape(unnamed);
conformance.batches(unnamed);
conformance.inProcessTransport(unnamed);
