import { type Broker, isRustStreamError, systemClock } from "@ruststream/core";
import { brokerMark, CountingCoordinator, describeMark } from "@ruststream/core/broker";
import { conformance } from "@ruststream/testing/conformance";
import { brokers, bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedKafkaBroker,
  KafkaBroker,
  type KafkaSaslOptions,
  KafkaTopic,
} from "../src/index.js";

// Credentials against the cluster's SASL listener (tooling/brokers runs one beside the plain one):
// nothing meant for docs carries the password, on either engine and in-process, and a login works
// with every mechanism and is refused, promptly and saying why, with a wrong password.

const engines = ["librdkafka", "kafkajs"] as const;

/** A broker whose SCRAM password is `secret`: the user is (re)created with it first. */
function scramBroker(engine: (typeof engines)[number]) {
  return (secret: string) => {
    const username = `credentials-${engine}`;
    brokers.kafka.addScramUserSync(username, secret);
    return new KafkaBroker({
      brokers: requireEnv("KAFKA_SASL_BROKERS"),
      engine,
      sasl: { mechanism: "scram-sha-256", username, password: secret },
    });
  };
}

const makeSource = (name: string) => new KafkaTopic(name, { group: `group-${name}` });

for (const engine of engines) {
  describe(engine, () => {
    conformance.credentials({ makeBroker: scramBroker(engine), makeSource });
  });
}

describe("in-process", () => {
  // The production broker's settings, credentials included, over the stand-in.
  conformance.credentials({
    makeBroker: (secret): Broker<ConnectedKafkaBroker> => {
      const broker = new KafkaBroker({
        brokers: "127.0.0.1:9092",
        sasl: { mechanism: "scram-sha-512", username: "svc", password: secret },
      });
      return Object.assign(
        {
          [brokerMark]: "kafka",
          [describeMark]: true as const,
          describeServer: () => broker.describeServer(),
          connect: () =>
            broker.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
        },
        {},
      );
    },
    makeSource,
  });
});

function sasl(mechanism: KafkaSaslOptions["mechanism"], password?: string): KafkaSaslOptions {
  return {
    mechanism,
    username: requireEnv("KAFKA_SASL_USERNAME"),
    password: password ?? requireEnv("KAFKA_SASL_PASSWORD"),
  };
}

describe("logins", () => {
  for (const engine of engines) {
    for (const mechanism of ["scram-sha-256", "scram-sha-512", "plain"] as const) {
      it(`${engine}: a record round trip over SASL ${mechanism}`, async () => {
        const connected = await new KafkaBroker({
          brokers: requireEnv("KAFKA_SASL_BROKERS"),
          engine,
          sasl: sasl(mechanism),
        }).connect();
        try {
          const topic = uniqueName(`sasl-${engine}`);
          const subscription = await connected.subscribe(makeSource(topic));
          const publisher = await connected.defaultPublishPolicy().pair(connected);
          await publisher.publish({ name: topic, payload: bytes(mechanism) });
          const next = await subscription.next();
          if (next.done) throw new Error("the subscription ended");
          expect(text(next.value.payload)).toBe(mechanism);
          expect(await next.value.ack()).toBe("ok");
        } finally {
          await connected.shutdown();
        }
      });
    }

    it(`${engine}: a wrong password is refused at connect, promptly, naming the fix`, async () => {
      const started = Date.now();
      const refused = await new KafkaBroker({
        brokers: requireEnv("KAFKA_SASL_BROKERS"),
        engine,
        sasl: sasl("scram-sha-256", "not-the-password"),
        connectTimeoutMs: 20_000,
      })
        .connect()
        .catch((error: unknown) => error);
      expect(isRustStreamError(refused, "broker-failure"), String(refused)).toBe(true);
      expect(String((refused as Error).message)).toMatch(/authentication/i);
      expect(String((refused as Error).message)).toMatch(/sasl mechanism, username and password/);
      // Refused by the cluster, not timed out.
      expect(Date.now() - started).toBeLessThan(10_000);
    });

    it(`${engine}: nothing listening is refused within the connect timeout`, async () => {
      const refused = await new KafkaBroker({
        brokers: "127.0.0.1:1",
        engine,
        connectTimeoutMs: 3000,
      })
        .connect()
        .catch((error: unknown) => error);
      expect(isRustStreamError(refused, "broker-failure"), String(refused)).toBe(true);
      expect(String((refused as Error).message)).toContain("127.0.0.1:1");
    });
  }
});
