import type { Broker, ConnectOptions } from "../broker/contract.js";
import type { InProcessBroker, InProcessOptions } from "../broker/inProcess.js";
import type { DescribesServer } from "../capabilities.js";
import { systemClock } from "../clock.js";
import { RustStreamError } from "../errors.js";
import { brokerMark, describeMark, inProcessMark } from "../marks.js";
import type { ServerDescription } from "../server.js";
import { ConnectedMemoryBroker } from "./memoryConnection.js";
import { describeMemoryServer, type MemoryBrokerOptions } from "./memoryOptions.js";
import { MemoryStore } from "./memoryStore.js";

/**
 * The in-process broker: the reference for every conformance suite and the transport tests run on.
 * The object is the server: each `connect()` is a client of it, and what one connection publishes,
 * or leaves unsettled when it shuts down, the next one sees. Two objects share nothing.
 */
export class MemoryBroker
  implements Broker<ConnectedMemoryBroker>, InProcessBroker<ConnectedMemoryBroker>, DescribesServer
{
  readonly [brokerMark] = "memory";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #store: MemoryStore;
  readonly #options: MemoryBrokerOptions;

  constructor(options: MemoryBrokerOptions = {}) {
    const retain = options.retain ?? 1000;
    if (!Number.isSafeInteger(retain) || retain < 0) {
      throw new RustStreamError(
        "invalid-argument",
        `retain: ${retain}; give a whole number, 0 or more`,
      );
    }
    this.#options = options;
    this.#store = new MemoryStore(retain, options.clock ?? systemClock);
  }

  /** The server, from configuration alone: `memory`, and the `url` option's host without its user. */
  describeServer(): ServerDescription {
    return describeMemoryServer(this.#options);
  }

  /** Nothing between it and its store can fail: the connection is `connected` until shut down. */
  async connect(options?: ConnectOptions): Promise<ConnectedMemoryBroker> {
    return new ConnectedMemoryBroker(this.#store, this.#options, false, options?.onState);
  }

  /** The same broker, with the test's clock, counting for the test's coordinator. */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedMemoryBroker> {
    this.#store.clock = options.clock;
    this.#store.coordinator = options.coordinator;
    // A harness that starts the same app (so the same broker object) test after test sees only
    // what its own run published: the log starts afresh once no connection is left from before.
    if (this.#store.openConnections === 0 || this.#store.publishedLog === undefined) {
      this.#store.publishedLog = new Map();
    }
    return new ConnectedMemoryBroker(this.#store, this.#options, true, options.onState);
  }
}
