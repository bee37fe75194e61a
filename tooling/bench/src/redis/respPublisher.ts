import { connect, type Socket } from "node:net";
import { frameOf } from "./payload.js";

// PUBLISH commands per write: one prebuilt buffer of RESP, written again and again.
const chunk = 512;

/**
 * The pub/sub load generator's publisher: PUBLISH written as prebuilt RESP on a plain socket. Built
 * through ioredis, the publisher was the slowest process in the pub/sub rows (a command object and
 * a payload per message; the subscriber sat idle 80% of the time), so every row measured it and
 * not its subscriber. Here the generator's cost per message is near nothing. The 512 payloads of a
 * chunk are distinct (their sequence numbers), and repeat from one chunk to the next.
 */
export class RespPublisher {
  readonly #socket: Socket;
  #answered = 0;
  #waiting: (() => void) | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    // Every PUBLISH is answered with one integer (`:n\r\n`): one line feed per reply.
    socket.on("data", (data: Buffer) => {
      let replies = 0;
      for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) replies++;
      this.#answered += replies;
      this.#waiting?.();
    });
  }

  static open(url: string): Promise<RespPublisher> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port || 6379) }, () => {
        socket.off("error", reject);
        socket.setNoDelay(true);
        resolve(new RespPublisher(socket));
      });
      socket.once("error", reject);
    });
  }

  /**
   * Publishes `count` messages on `channel`, never more than `window` ahead of `received()` (the
   * consumer's last report); `waitCredit` resolves when a report arrives. Resolves once the server
   * answered every one.
   */
  async publish(
    channel: string,
    count: number,
    window: number,
    received: () => number,
    waitCredit: () => Promise<void>,
  ): Promise<void> {
    const commands = prebuilt(channel);
    const size = commands.length / chunk;
    const start = this.#answered;
    let sent = 0;
    while (sent < count) {
      while (sent - received() >= window) await waitCredit();
      const n = Math.min(chunk, count - sent, received() + window - sent);
      if (!this.#socket.write(commands.subarray(0, n * size))) {
        await new Promise((resolve) => this.#socket.once("drain", resolve));
      }
      sent += n;
    }
    while (this.#answered - start < count) {
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
    }
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** `chunk` PUBLISH commands to `channel`, each the same size, back to back. */
function prebuilt(channel: string): Buffer {
  const parts: Buffer[] = [];
  const name = Buffer.from(channel);
  for (let i = 0; i < chunk; i++) {
    const frame = frameOf(i);
    parts.push(
      Buffer.from(`*3\r\n$7\r\nPUBLISH\r\n$${name.length}\r\n`),
      name,
      Buffer.from(`\r\n$${frame.length}\r\n`),
      frame,
      Buffer.from("\r\n"),
    );
  }
  return Buffer.concat(parts);
}
