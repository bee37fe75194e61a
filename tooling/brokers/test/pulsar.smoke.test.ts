import { randomUUID } from "node:crypto";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { requireEnv } from "../src/requireEnv.mjs";
import { admin } from "./pulsarAdmin.js";

function binaryAddress(): { host: string; port: number } {
  const url = new URL(requireEnv("PULSAR_URL"));
  return { host: url.hostname, port: Number(url.port) };
}

function open(): Promise<Socket> {
  const { host, port } = binaryAddress();
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

// Just enough protobuf for the handshake: CONNECT is the one frame a client must send first.
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

function lengthDelimited(field: number, bytes: Uint8Array | number[]): number[] {
  return [(field << 3) | 2, ...varint(bytes.length), ...bytes];
}

/** [totalSize][commandSize][BaseCommand{type=CONNECT(2), connect=2:{client_version=1, protocol_version=4}}] */
function connectFrame(): Buffer {
  const connect = [...lengthDelimited(1, Buffer.from("ruststream-smoke")), 4 << 3, ...varint(20)];
  const command = Buffer.from([1 << 3, ...varint(2), ...lengthDelimited(2, connect)]);
  const frame = Buffer.alloc(8 + command.length);
  frame.writeUInt32BE(4 + command.length, 0);
  frame.writeUInt32BE(command.length, 4);
  command.copy(frame, 8);
  return frame;
}

/** The BaseCommand type of the first frame the broker answers with (field 1, a varint < 128 here). */
function firstCommandType(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 8 || received.length < 4 + received.readUInt32BE(0)) return;
      const command = received.subarray(8, 8 + received.readUInt32BE(4));
      if (command[0] !== 1 << 3) reject(new Error(`unexpected first field tag ${command[0]}`));
      else resolve(command[1] ?? -1);
    });
    socket.once("error", reject);
    socket.once("close", () =>
      reject(new Error("the broker closed the connection before answering")),
    );
  });
}

describe("pulsar standalone on loopback", () => {
  it("admin API: a partitioned topic is created with its partitions and listed", async () => {
    const topic = `smoke-${randomUUID()}`;
    const path = `/admin/v2/persistent/public/default/${topic}/partitions`;
    await admin(path, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: "3",
    });

    const metadata = (await (await admin(path)).json()) as { partitions: number };
    expect(metadata.partitions).toBe(3);

    const listed = (await (
      await admin("/admin/v2/persistent/public/default/partitioned")
    ).json()) as string[];
    expect(listed).toContain(`persistent://public/default/${topic}`);
  });

  it("binary port: accepts TCP and answers CONNECT with CONNECTED", async () => {
    const socket = await open();
    try {
      const answer = firstCommandType(socket);
      socket.write(connectFrame());
      expect(await answer).toBe(3); // CONNECTED
    } finally {
      socket.destroy();
    }
  });
});
