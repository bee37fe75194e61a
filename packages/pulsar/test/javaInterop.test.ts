// The other direction of codec interop: batches the Java client compressed (LZ4, ZLIB, ZSTD,
// SNAPPY) read by our consumer. Pulsar's Java client runs from the jars tooling/brokers resolved.
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { PulsarClient } from "../src/wire/index.js";
import { pulsarLibs, serviceUrl } from "./env.js";

const CODECS = ["NONE", "LZ4", "ZLIB", "ZSTD", "SNAPPY"] as const;

let client: PulsarClient;
afterEach(async () => {
  await client?.close();
});

describe("batches written by Pulsar's Java client", () => {
  it("are read whole in every codec: payloads, keys, properties, batch indexes", async () => {
    const libs = pulsarLibs();
    const classes = mkdtempSync(join(tmpdir(), "rs-javaproducer-"));
    const classpath = `${libs}/*`;
    execFileSync("javac", [
      "-cp",
      classpath,
      "-d",
      classes,
      join(import.meta.dirname, "java", "JavaProducer.java"),
    ]);
    const topic = uniqueName("java");
    execFileSync(
      "java",
      ["-cp", `${classes}:${classpath}`, "JavaProducer", serviceUrl(), topic, ...CODECS],
      {
        stdio: "ignore",
        timeout: 90_000,
      },
    );

    client = new PulsarClient({ serviceUrl: serviceUrl() });
    for (const codec of CODECS) {
      const consumer = await client.subscribe({
        topic: `${topic}-${codec.toLowerCase()}`,
        subscription: "s",
        initialPosition: "earliest",
      });
      for (let i = 0; i < 10; i++) {
        const m = await consumer.receive({ timeoutMs: 10_000 });
        expect(text(m.payload)).toBe(`java ${codec} ${i} ${"abcdefgh".repeat(i * 10)}`);
        expect(m.key).toBe(`k${i}`);
        expect(m.properties.get("n")).toBe(String(i));
        expect(m.messageId.batchSize).toBe(5);
        expect(m.messageId.batchIndex).toBe(i % 5);
        consumer.ack(m);
      }
      await consumer.close();
    }
  }, 120_000);
});
