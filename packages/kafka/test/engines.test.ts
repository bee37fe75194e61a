import { isRustStreamError } from "@ruststream/core";
import { uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { resolveConnection } from "../src/client/connectionOptions.js";
import { clientConfig } from "../src/client/kafkajs/config.js";
import { connectionConfig } from "../src/client/librdkafka/config.js";
import { loadClient } from "../src/client/load.js";
import { KafkaBroker, KafkaPublish, KafkaTopic } from "../src/index.js";
import { brokerFor, connect, type Where } from "./connections.js";

// What one engine cannot do is refused when the subscription or publisher is created, naming the
// engine that can; the in-process mode refuses what the configured engine would. Configuration the
// package can never honour is refused when it is built.

async function codeOf(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return "accepted";
  } catch (error) {
    return isRustStreamError(error) ? `${error.code}: ${error.message}` : `${error}`;
  }
}

describe("engine refusals", () => {
  for (const where of ["kafkajs", "in-process"] as const satisfies readonly Where[]) {
    it(`${where} with the kafkajs engine: range and cooperative-sticky assignment, lz4`, async () => {
      const broker =
        where === "in-process"
          ? new KafkaBroker({ brokers: "127.0.0.1:9092", engine: "kafkajs" })
          : brokerFor("kafkajs");
      const connected = await connect(where, broker);
      try {
        for (const assignment of ["range", "cooperative-sticky"] as const) {
          const answer = await codeOf(() =>
            connected.subscribe(new KafkaTopic(uniqueName("refused"), { group: "g", assignment })),
          );
          expect(answer).toMatch(/^unsupported: /);
          expect(answer).toContain(
            `assignment "${assignment}" is not available on the kafkajs engine`,
          );
          expect(answer).toContain('use engine "librdkafka" (@confluentinc/kafka-javascript)');
        }
        const lz4 = await codeOf(() => new KafkaPublish({ compression: "lz4" }).pair(connected));
        expect(lz4).toMatch(/^unsupported: compression "lz4".*use engine "librdkafka"/);
        // What kafkajs has is accepted.
        expect(await codeOf(() => new KafkaPublish({ compression: "gzip" }).pair(connected))).toBe(
          "accepted",
        );
      } finally {
        await connected.shutdown();
      }
    });
  }

  it("librdkafka takes every assignment strategy and compression", async () => {
    const connected = await connect("librdkafka", brokerFor("librdkafka"));
    try {
      const subscription = await connected.subscribe(
        new KafkaTopic(uniqueName("cooperative"), {
          group: uniqueName("g"),
          assignment: "cooperative-sticky",
        }),
      );
      await subscription.close();
      expect(await codeOf(() => new KafkaPublish({ compression: "lz4" }).pair(connected))).toBe(
        "accepted",
      );
    } finally {
      await connected.shutdown();
    }
  });
});

describe("configuration refused when it is built", () => {
  it("an unknown commit mode names the three", () => {
    expect(
      () => new KafkaTopic("orders", { commit: "exactly-once" as unknown as "tracked" }),
    ).toThrow(/give "auto", "tracked" or "transactional"/);
  });

  it('a topic name starting with "^" (a regex to librdkafka) and illegal names', () => {
    expect(() => new KafkaTopic("^orders-.*")).toThrow(/regular expression/);
    expect(() => new KafkaTopic("orders", { retryTopic: "^retry" })).toThrow(/regular expression/);
    expect(() => new KafkaTopic("a topic")).toThrow(/not a legal Kafka topic name/);
    expect(() => new KafkaTopic("orders", { retryTopic: "orders" })).toThrow(/topic itself/);
  });

  it("tracked refuses raw librdkafka properties that belong to the commit mode", async () => {
    // Checked where librdkafka's properties are built, so against the cluster.
    const live = await connect("librdkafka", brokerFor("librdkafka"));
    try {
      const answer = await codeOf(() =>
        live.subscribe(
          new KafkaTopic(uniqueName("owned"), { group: "g", commit: "tracked" }).config(
            "enable.auto.offset.store",
            true,
          ),
        ),
      );
      expect(answer).toMatch(
        /^invalid-argument: config "enable.auto.offset.store" belongs to the commit mode/,
      );
    } finally {
      await live.shutdown();
    }
  });

  it("an unknown raw librdkafka property is refused at subscribe, naming it", async () => {
    const live = await connect("librdkafka", brokerFor("librdkafka"));
    try {
      const answer = await codeOf(() =>
        live.subscribe(
          new KafkaTopic(uniqueName("bad"), { group: "g" }).config("no.such.property", 1),
        ),
      );
      expect(answer).toMatch(/^invalid-argument: .*no\.such\.property/);
    } finally {
      await live.shutdown();
    }
  });

  it("the broker constructor does no I/O and takes only host:port bootstrap servers", () => {
    expect(() => new KafkaBroker({ brokers: "" })).toThrow(/needs brokers/);
    expect(() => new KafkaBroker({ brokers: "kafka://user:pw@host:9092" })).toThrow(
      /credentials go in the sasl option/,
    );
    expect(() => new KafkaBroker({ brokers: ["a:1", "b:2"] }).describeServer()).not.toThrow();
  });

  // The cluster of tooling/brokers has no TLS listener: the shape is checked as far as this package
  // takes it, into each engine's settings.
  it("takes core's TLS shape and hands it to each engine as that engine names the settings", () => {
    const ca = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
    const key = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";
    const tls = { ca: [ca, new TextEncoder().encode(ca)], cert: ca, key, keyPassword: "pw" };
    const rd = connectionConfig(
      resolveConnection({ brokers: "a:1", tls: { ...tls, verify: false } }, []),
    );
    expect(rd).toMatchObject({
      "security.protocol": "ssl",
      "ssl.ca.pem": `${ca}\n${ca}`,
      "ssl.certificate.pem": ca,
      "ssl.key.pem": key,
      "ssl.key.password": "pw",
      "enable.ssl.certificate.verification": false,
    });
    const kjs = clientConfig(
      resolveConnection(
        { brokers: "a:1", engine: "kafkajs", tls: { ...tls, servername: "k" } },
        [],
      ),
      0,
    );
    expect(kjs.ssl).toEqual({ ca: [ca, ca], cert: ca, key, passphrase: "pw", servername: "k" });
    expect(clientConfig(resolveConnection({ brokers: "a:1", tls: true }, []), 0).ssl).toBe(true);
    expect(() => new KafkaBroker({ brokers: "a:1", tls: { servername: "k" } })).toThrow(
      /tls\.servername: the librdkafka engine .* or use engine: "kafkajs"/,
    );
    expect(() => new KafkaBroker({ brokers: "a:1", tls: { verify: "no" } as never })).toThrow(
      /tls\.verify: give true or false/,
    );
  });
});

describe("a missing client", () => {
  it("is named, with the package to install and the other engine", async () => {
    const missing = Object.assign(new Error("Cannot find package 'kafkajs' imported from x"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    const answer = await codeOf(() => loadClient("kafkajs", () => Promise.reject(missing)));
    expect(answer).toMatch(/^unsupported: the Kafka engine "kafkajs" needs the package kafkajs/);
    expect(answer).toContain("npm install kafkajs");
    expect(answer).toContain('engine: "librdkafka" (npm install @confluentinc/kafka-javascript)');
    const native = Object.assign(new Error("Cannot find module '@confluentinc/kafka-javascript'"), {
      code: "MODULE_NOT_FOUND",
    });
    const nativeAnswer = await codeOf(() => loadClient("librdkafka", () => Promise.reject(native)));
    expect(nativeAnswer).toContain("npm install @confluentinc/kafka-javascript");
    expect(nativeAnswer).toContain('engine: "kafkajs"');
  });

  it("is loaded only when a broker connects: building one imports nothing", async () => {
    const broker = new KafkaBroker({ brokers: "127.0.0.1:9092", engine: "kafkajs" });
    expect(broker.engine).toBe("kafkajs");
    expect(broker.describeServer()).toEqual({
      protocol: "kafka",
      host: "127.0.0.1:9092",
      description: "Kafka cluster (plaintext)",
    });
  });
});
