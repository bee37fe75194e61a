// Key routing: our hashes against published MurmurHash3 vectors, and against Pulsar's Java client
// itself (its jars are in the Maven tree tooling/brokers resolved to run the standalone broker).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bytes } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { javaStringHashCode, keyHash, murmur3_32, partitionForKey } from "../src/wire/murmur3.js";
import { pulsarLibs } from "./env.js";

const KEYS = [
  "",
  "a",
  "ab",
  "abc",
  "abcd",
  "hello",
  "customer-7",
  "sku-12345",
  ...Array.from({ length: 40 }, (_, i) => `key-${i}`),
  "ümlaut",
  "日本語のキー",
  "emoji 😀 key",
  "x".repeat(1000),
];

describe("murmur3_32", () => {
  // MurmurHash3_x86_32 with seed 0, the values of the reference implementation.
  it.each([
    ["", 0],
    ["hello", 0x248bfa47],
    ["The quick brown fox jumps over the lazy dog", 0x2e4ff723],
  ])("%j", (input, expected) => {
    expect(murmur3_32(bytes(input))).toBe(expected);
  });

  it("honours the seed (seed 1 of empty input is 0x514e28b7)", () => {
    expect(murmur3_32(new Uint8Array(0), 1)).toBe(0x514e28b7);
  });
});

describe("java String.hashCode", () => {
  it("matches Java's published values", () => {
    expect(javaStringHashCode("")).toBe(0);
    expect(javaStringHashCode("hello")).toBe(99162322);
    expect(javaStringHashCode("polygenelubricants")).toBe(-2147483648);
  });
});

describe("partition choice against Pulsar's Java client", () => {
  it("JavaStringHash and Murmur3_32Hash give the Java client's hashes and partitions", () => {
    const libs = pulsarLibs();
    const out = mkdtempSync(join(tmpdir(), "rs-keyhashes-"));
    // Only what the two hashes need: the client, pulsar-common (Murmur3_32Hash) and guava (UnsignedBytes).
    const jars = ["pulsar-client-original-4.0.7.jar", "pulsar-common-4.0.7.jar"];
    const guava = readdirSync(libs).find((name) => /^guava-.*\.jar$/.test(name));
    if (guava) jars.push(guava);
    const classpath = jars.map((jar) => join(libs, jar)).join(":");
    execFileSync("javac", [
      "-cp",
      classpath,
      "-d",
      out,
      join(import.meta.dirname, "java", "KeyHashes.java"),
    ]);
    const printed = execFileSync("java", ["-cp", `${out}:${classpath}`, "KeyHashes"], {
      input: `${KEYS.join("\n")}\n`,
      encoding: "utf8",
    });
    const rows = printed
      .trim()
      .split("\n")
      .map((line) => line.split(" ").map(Number));
    expect(rows).toHaveLength(KEYS.length);
    KEYS.forEach((key, i) => {
      const [java, murmur, java7, murmur7, java100, murmur100] = rows[i]!;
      expect([key, keyHash(key, "JavaStringHash")]).toEqual([key, java]);
      expect([key, keyHash(key, "Murmur3_32Hash")]).toEqual([key, murmur]);
      expect(partitionForKey(key, 7, "JavaStringHash")).toBe(java7);
      expect(partitionForKey(key, 7, "Murmur3_32Hash")).toBe(murmur7);
      expect(partitionForKey(key, 100, "JavaStringHash")).toBe(java100);
      expect(partitionForKey(key, 100, "Murmur3_32Hash")).toBe(murmur100);
    });
  }, 60_000);
});
