import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { exclusive, restart } from "../src/pulsar.mjs";
import { requireEnv } from "../src/requireEnv.mjs";

/** Runs test/java/PulsarBacklog.java (Pulsar's Java client, from the broker's jars); answers its stdout. */
async function javaClient(args: string[]): Promise<string> {
  const program = join(import.meta.dirname, "java", "PulsarBacklog.java");
  const { stdout } = await promisify(execFile)(
    "java",
    ["-cp", `${requireEnv("PULSAR_LIBS")}/*`, program, ...args],
    { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
}

function binaryAddress(): { host: string; port: number } {
  const url = new URL(requireEnv("PULSAR_URL"));
  return { host: url.hostname, port: Number(url.port) };
}

async function admin(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${requireEnv("PULSAR_ADMIN_URL")}${path}`, init);
  if (!response.ok)
    throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${await response.text()}`);
  return response;
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

  it(
    "a topic's backlog and its subscription's cursor survive a hard restart",
    () =>
      // Restarts the shared standalone: alone on it, or another such test dies mid-way by luck.
      exclusive(async () => {
        const url = requireEnv("PULSAR_URL");
        const name = `smoke-restart-${randomUUID()}`;
        const topic = `persistent://public/default/${name}`;
        // 100 messages sent, each confirmed persisted; the first 40 received and acknowledged.
        await javaClient(["before", url, topic, "s", "100", "40"]);

        // A crash, not a polite shutdown: only what the bookie and the metadata store wrote survives.
        const started = Date.now();
        await restart({ hard: true });
        const restartMs = Date.now() - started;

        const stats = (await (
          await admin(`/admin/v2/persistent/public/default/${name}/stats`)
        ).json()) as { subscriptions: Record<string, { msgBacklog: number }> };
        expect(stats.subscriptions.s?.msgBacklog).toBe(60);
        const delivered = (await javaClient(["after", url, topic, "s"]))
          .split("\n")
          .filter((line) => line.startsWith("delivered "))
          .map((line) => Number(line.slice("delivered ".length)));
        // The backlog, whole and in order, from the same subscription: nothing it acknowledged.
        expect(delivered).toEqual(Array.from({ length: 60 }, (_, i) => 40 + i));
        await admin(`/admin/v2/persistent/public/default/${name}?force=true`, {
          method: "DELETE",
        });
        process.stderr.write(
          `[pulsar restart test] restart({ hard: true }) took ${restartMs} ms\n`,
        );
      }),
    300_000,
  );
});
