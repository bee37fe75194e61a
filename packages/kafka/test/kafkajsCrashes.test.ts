// Which kafkajs consumer crashes the engine starts again from (client/kafkajs/errors.ts), told from
// kafkajs's own error classes as its consumer raises them: no cluster needed.
import kafkajs from "kafkajs";
import { describe, expect, it } from "vitest";
import { crashOutcome, crashRestarts } from "../src/client/kafkajs/errors.js";

// kafkajs's declarations leave out the constructors' options (`cause`, `retriable`, a protocol
// error's `type`), which its consumer passes: the classes are taken as they run.
type ErrorClass = new (...args: unknown[]) => Error;
const errorClass = (name: string) => (kafkajs as unknown as Record<string, ErrorClass>)[name]!;
const KafkaJSConnectionError = errorClass("KafkaJSConnectionError");
const KafkaJSGroupCoordinatorNotFound = errorClass("KafkaJSGroupCoordinatorNotFound");
const KafkaJSNonRetriableError = errorClass("KafkaJSNonRetriableError");
const KafkaJSNumberOfRetriesExceeded = errorClass("KafkaJSNumberOfRetriesExceeded");
const KafkaJSProtocolError = errorClass("KafkaJSProtocolError");
const KafkaJSRequestTimeoutError = errorClass("KafkaJSRequestTimeoutError");
const KafkaJSSASLAuthenticationError = errorClass("KafkaJSSASLAuthenticationError");

const protocol = (type: string, retriable: boolean) =>
  new KafkaJSProtocolError({ message: type, type, code: 0, retriable });

const refused = () =>
  new KafkaJSConnectionError("Connection error: connect ECONNREFUSED 127.0.0.1:9092");

describe("a kafkajs consumer crash kafkajs does not restart from", () => {
  it("restarts when the cluster being away explains it", () => {
    // What a consumer kafkajs restarted meets when the cluster is still going down or coming up.
    expect(
      crashOutcome(new KafkaJSGroupCoordinatorNotFound("Failed to find group coordinator")),
    ).toBe("restart");
    expect(crashOutcome(new KafkaJSNonRetriableError(refused(), { cause: refused() }))).toBe(
      "restart",
    );
    expect(
      crashOutcome(new KafkaJSNumberOfRetriesExceeded(refused(), { retryCount: 5, retryTime: 1 })),
    ).toBe("restart");
    expect(
      crashOutcome(new KafkaJSRequestTimeoutError("Request Fetch(key: 1, version: 11) timed out")),
    ).toBe("restart");
    expect(
      crashOutcome(
        new KafkaJSNonRetriableError("wrapped", { cause: protocol("NOT_COORDINATOR", true) }),
      ),
    ).toBe("restart");
  });

  it("ends the consumer on a refusal no retry fixes, even wrapped in retries run out", () => {
    expect(
      crashOutcome(new KafkaJSSASLAuthenticationError("SASL SCRAM SHA256 authentication failed")),
    ).toBe("fatal");
    expect(crashOutcome(protocol("TOPIC_AUTHORIZATION_FAILED", false))).toBe("fatal");
    expect(crashOutcome(protocol("GROUP_AUTHORIZATION_FAILED", false))).toBe("fatal");
    expect(crashOutcome(protocol("INVALID_CONFIG", false))).toBe("fatal");
    expect(
      crashOutcome(
        new KafkaJSNumberOfRetriesExceeded(protocol("UNKNOWN_TOPIC_OR_PARTITION", true), {
          retryCount: 5,
          retryTime: 1,
        }),
      ),
    ).toBe("fatal");
  });

  it("ends the consumer on an error not known to be transient, and on what is no error", () => {
    expect(crashOutcome(new KafkaJSNonRetriableError("Invalid offset"))).toBe("fatal");
    expect(crashOutcome(new TypeError("a handler bug"))).toBe("fatal");
    expect(crashOutcome("not an error")).toBe("fatal");
    expect(crashOutcome(undefined)).toBe("fatal");
  });

  it("counts kafkajs's own restart as a restart, whatever the error", () => {
    expect(
      crashRestarts({ error: new KafkaJSNonRetriableError("Invalid offset"), restart: true }),
    ).toBe(true);
    expect(
      crashRestarts({ error: new KafkaJSNonRetriableError("Invalid offset"), restart: false }),
    ).toBe(false);
    expect(crashRestarts({ error: refused(), restart: false })).toBe(true);
  });
});
