import { Socket } from "node:net";
import { vi } from "vitest";

/**
 * Counts the socket writes (`_write` and `_writev` calls) to the server on `port` while `work` runs,
 * and keeps what they wrote: how a test sees commands of one tick leave in one write.
 */
export async function countingWrites<T>(
  port: number,
  work: () => Promise<T>,
): Promise<{ result: T; writes: number; sent: string; log: { socket: Socket; sent: string }[] }> {
  let writes = 0;
  let sent = "";
  const log: { socket: Socket; sent: string }[] = [];
  const keep = (chunk: unknown) => {
    const piece = Buffer.isBuffer(chunk) ? chunk.toString("latin1") : String(chunk);
    sent += piece;
    log.at(-1)!.sent += piece;
  };
  const toServer = (socket: Socket) => socket.remotePort === port;
  const write = Socket.prototype._write;
  const writev = Socket.prototype._writev!;
  vi.spyOn(Socket.prototype, "_write").mockImplementation(function (this: Socket, ...args) {
    if (toServer(this)) {
      writes++;
      log.push({ socket: this, sent: "" });
      keep(args[0]);
    }
    return write.apply(this, args);
  });
  vi.spyOn(Socket.prototype, "_writev").mockImplementation(function (this: Socket, ...args) {
    if (toServer(this)) {
      writes++;
      log.push({ socket: this, sent: "" });
      for (const { chunk } of args[0]) keep(chunk);
    }
    return writev.apply(this, args);
  });
  try {
    return { result: await work(), writes, sent, log };
  } finally {
    vi.restoreAllMocks();
  }
}
