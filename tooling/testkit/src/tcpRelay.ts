import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP relay in front of a test's server (a RabbitMQ node, PostgreSQL), for losing the connection
 * on purpose: `cut()` closes every relayed connection and stops listening (a client sees the server
 * gone, and its reconnects are refused), `restore()` listens again on the same port. `mute()` drops
 * what the server sends from then on (a reply lost on the way), while what the client sends still
 * reaches the server. `stall()` holds what either side sends, the connections left open (a network
 * that stops carrying, no reset), until `unstall()` passes it on, in order: nothing is lost.
 */
export class TcpRelay {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #muted = false;
  /** While stalled, what each side sent, held in order, with the socket it goes to. */
  #held: { readonly to: Socket; readonly chunk: Buffer }[] | undefined;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.#target);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on("error", () => {});
        s.on("close", () => {
          this.#sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.on("data", (chunk: Buffer) => this.#pass(upstream, chunk));
      upstream.on("data", (chunk: Buffer) => {
        if (!this.#muted) this.#pass(client, chunk);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  #pass(to: Socket, chunk: Buffer): void {
    if (this.#held === undefined) to.write(chunk);
    else this.#held.push({ to, chunk });
  }

  /** Holds what either side sends from now on, until `unstall()`. */
  stall(): void {
    this.#held ??= [];
  }

  /** Passes on what was held, in the order it came, and carries on as before. */
  unstall(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const { to, chunk } of held) if (!to.destroyed) to.write(chunk);
  }

  mute(): void {
    this.#muted = true;
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#held = undefined;
    for (const s of this.#sockets) s.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  restore(): Promise<void> {
    this.#muted = false;
    return this.start();
  }

  /** The server's URL with the relay's port (and its host, 127.0.0.1). */
  url(serverUrl: string): string {
    const url = new URL(serverUrl);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.toString();
  }
}
