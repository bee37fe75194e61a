import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";

/** A server on a free loopback port. */
export interface Loopback {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves `handler` on 127.0.0.1 at a free port. */
export async function serveLoopback(handler: RequestListener): Promise<Loopback> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
