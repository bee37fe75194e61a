import { randomUUID } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { exclusive, restart } from "../src/nats.mjs";
import { requireEnv } from "../src/requireEnv.mjs";

// Restarts the plain NATS server every project's live tests share, so it runs in the restarts
// project (vitest.restart.config.ts), whose group starts once every other project's has ended.

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

async function api<T>(nc: NatsConnection, subject: string, body?: unknown): Promise<T> {
  const answer = (await nc.request(subject, body === undefined ? undefined : json(body))).json<
    T & { error?: { description: string } }
  >();
  if (answer.error) throw new Error(`${subject}: ${answer.error.description}`);
  return answer;
}

describe("nats (a hard restart)", () => {
  it(
    "a JetStream stream on file storage keeps every acknowledged message through a SIGKILL",
    () =>
      exclusive(async () => {
        const url = requireEnv("NATS_URL");
        const stream = `RESTART_${randomUUID().replaceAll("-", "")}`;
        const before = await connect({ servers: url, reconnect: false });
        await api(before, `$JS.API.STREAM.CREATE.${stream}`, {
          name: stream,
          subjects: [`${stream}.>`],
          storage: "file",
        });
        for (let n = 1; n <= 100; n++) {
          const ack = await api<{ seq: number }>(before, `${stream}.n`, { n });
          expect(ack.seq).toBe(n);
        }
        await before.close();

        // A crash, not a polite shutdown: only what the server wrote to its files survives.
        await restart({ hard: true });

        const after = await connect({ servers: url, reconnect: false });
        try {
          const info = await api<{ state: { messages: number; last_seq: number } }>(
            after,
            `$JS.API.STREAM.INFO.${stream}`,
          );
          expect(info.state).toMatchObject({ messages: 100, last_seq: 100 });
          for (const seq of [1, 100]) {
            const got = await api<{ message: { data: string } }>(
              after,
              `$JS.API.STREAM.MSG.GET.${stream}`,
              { seq },
            );
            expect(JSON.parse(Buffer.from(got.message.data, "base64").toString())).toEqual({
              n: seq,
            });
          }
          await api(after, `$JS.API.STREAM.DELETE.${stream}`);
        } finally {
          await after.close();
        }
      }),
    120_000,
  );
});
