// A loopback proxy in front of the real broker that tells its clients a smaller max message size
// than the broker's: the case of a broker whose limit is larger than what the client was told (or
// an entry stored while the broker's limit was larger). It passes every byte through as it is,
// except two answers it rewrites: CONNECTED, to carry `maxMessageSize`, and LOOKUP_RESPONSE, to
// name the proxy as the topic's broker, so the client's connections all go through it.
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import { baseCommand } from "../src/wire/commands/codec.js";
import { CommandType } from "../src/wire/commands/enums.js";
import { encodeCommandFrame } from "../src/wire/frame.js";
import { parseBrokerUrl } from "../src/wire/serviceUrl.js";

export interface NarrowingProxy {
  readonly url: string;
  /** Client connections accepted so far: a reconnect is one more. */
  readonly accepted: () => number;
  close(): Promise<void>;
}

/** The broker's frames, rewritten where they must be; whole frames out, each once complete. */
function rewriter(maxMessageSize: number, url: string): (chunk: Buffer) => Buffer[] {
  let buffered: Buffer = Buffer.alloc(0);
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    const out: Buffer[] = [];
    while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
      const total = buffered.readUInt32BE(0);
      const frame = buffered.subarray(0, 4 + total);
      buffered = buffered.subarray(4 + total);
      const commandSize = frame.readUInt32BE(4);
      // Payload frames (MESSAGE) go through untouched; only simple frames are rewritten.
      if (4 + commandSize !== total) {
        out.push(frame);
        continue;
      }
      const command = baseCommand.decode(frame.subarray(8));
      if (command.type === CommandType.CONNECTED)
        out.push(
          Buffer.from(
            encodeCommandFrame({
              ...command,
              connected: { ...command.connected!, maxMessageSize },
            }),
          ),
        );
      else if (command.type === CommandType.LOOKUP_RESPONSE)
        out.push(
          Buffer.from(
            encodeCommandFrame({
              ...command,
              lookupTopicResponse: { ...command.lookupTopicResponse!, brokerServiceUrl: url },
            }),
          ),
        );
      else out.push(frame);
    }
    return out;
  };
}

/** Starts a proxy to `brokerUrl` (`pulsar://host:port`) that announces `maxMessageSize`. */
export async function narrowingProxy(
  brokerUrl: string,
  maxMessageSize: number,
): Promise<NarrowingProxy> {
  const broker = parseBrokerUrl(brokerUrl);
  const sockets = new Set<Socket>();
  let accepted = 0;
  let url = "";
  const server: Server = createServer((client) => {
    accepted++;
    const upstream = netConnect({ host: broker.host, port: broker.port });
    sockets.add(client).add(upstream);
    const rewrite = rewriter(maxMessageSize, url);
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk) => {
      for (const frame of rewrite(chunk)) client.write(frame);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on("close", end);
      socket.on("error", end);
      socket.on("close", () => sockets.delete(socket));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  url = `pulsar://127.0.0.1:${port}`;
  return {
    url,
    accepted: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
