import { connect as connectTcp, type Socket } from "node:net";
import { connect as connectTls, createServer, type Server, type TLSSocket } from "node:tls";

/**
 * A proxy that ends the client's TLS in front of the test node, as a load balancer may: it asks
 * for the client's certificate and takes it, then relays the bytes to the node over plain TCP (the
 * node's plain listener) or over a TLS connection of its own that carries no client certificate
 * (the node's TLS listener). Either way the node never sees the client's certificate.
 */
export class TlsEndingRelay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  port = 0;

  /**
   * `cert` and `key`: the relay's own server certificate, for 127.0.0.1.
   * `upstream`: the node's plain port, or its TLS port with the CA its certificate chains to.
   */
  constructor(
    own: { readonly cert: Buffer; readonly key: Buffer },
    upstream:
      | { readonly port: number; readonly tls?: undefined }
      | { readonly port: number; readonly tls: { readonly ca: Buffer } },
  ) {
    this.#server = createServer(
      { ...own, requestCert: true, rejectUnauthorized: false },
      (client: TLSSocket) => {
        const node: Socket =
          upstream.tls === undefined
            ? connectTcp({ host: "127.0.0.1", port: upstream.port })
            : connectTls({ host: "127.0.0.1", port: upstream.port, ca: upstream.tls.ca });
        for (const s of [client, node]) {
          this.#sockets.add(s);
          s.on("error", () => {});
          s.on("close", () => {
            this.#sockets.delete(s);
            client.destroy();
            node.destroy();
          });
        }
        client.pipe(node);
        node.pipe(client);
      },
    );
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => resolve());
    });
    this.port = (this.#server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
