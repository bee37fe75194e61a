import type { Broker, Codec, Logger } from "@ruststream/core";

/** What `new ClientRustStream(options)` takes. */
export interface ClientRustStreamOptions {
  /** The broker to publish on, configured as the server's (the same object may serve both). */
  readonly broker: Broker;
  /** The name the client's app connects with (default "nestjs-client"). */
  readonly name?: string;
  /** How long `send` waits for the reply before erroring with code `timeout` (default 30 000 ms). */
  readonly timeoutMs?: number;
  /** Encodes what `emit` and `send` carry and decodes replies (default JSON). */
  readonly codec?: Codec<unknown>;
  /** Default: Nest's logger, in the context "ClientRustStream". */
  readonly logger?: Logger;
}
