import { describe, expect, it } from "vitest";
import { parseCreateArgs } from "../src/args.js";
import { CreateError } from "../src/createError.js";

function refusal(argv: string[]): CreateError {
  try {
    parseCreateArgs(argv);
  } catch (error) {
    if (error instanceof CreateError) return error;
    throw error;
  }
  throw new Error(`${argv.join(" ")} was accepted`);
}

describe("parseCreateArgs", () => {
  it("reads what npm passes after `npm init @ruststream <dir> --`", () => {
    expect(parseCreateArgs(["billing", "--broker", "kafka", "--yes"])).toEqual({
      directory: "billing",
      broker: "kafka",
      engine: undefined,
      name: undefined,
      yes: true,
      install: true,
      help: false,
      version: false,
    });
  });

  it("leaves out what is not given, for the prompts or the defaults to fill", () => {
    const flags = parseCreateArgs([]);
    expect([flags.directory, flags.broker, flags.name, flags.yes]).toEqual([
      undefined,
      undefined,
      undefined,
      false,
    ]);
  });

  it("takes the short flags, --name and --no-install", () => {
    const flags = parseCreateArgs(["-b", "redis", "-y", "--name", "@acme/orders", "--no-install"]);
    expect(flags).toMatchObject({
      broker: "redis",
      yes: true,
      name: "@acme/orders",
      install: false,
    });
  });

  it("takes Kafka's engine by name, confluent as librdkafka", () => {
    expect(parseCreateArgs(["--broker", "kafka", "--engine", "kafkajs"]).engine).toBe("kafkajs");
    expect(parseCreateArgs(["--broker", "kafka", "--engine", "confluent"]).engine).toBe(
      "librdkafka",
    );
    expect(parseCreateArgs(["--engine", "librdkafka"]).engine).toBe("librdkafka");
  });

  it("refuses, as a usage error naming the fix, what it cannot use", () => {
    expect(refusal(["--broker", "rabbit"]).message).toMatch(
      /--broker rabbit: give one of file, redis, kafka, pulsar, nats/,
    );
    expect(refusal(["--broker", "kafka", "--engine", "rdkafka"]).message).toMatch(
      /give kafkajs, or librdkafka/,
    );
    expect(refusal(["--broker", "redis", "--engine", "kafkajs"]).message).toMatch(
      /--engine is Kafka's/,
    );
    expect(refusal(["a", "b"]).message).toMatch(/one directory only; also given: b/);
    const unknown = refusal(["--brokr", "file"]);
    expect(unknown.message).toMatch(/brokr/);
    expect(unknown.message).toMatch(/npm init @ruststream -- --help/);
    expect(unknown.exitCode).toBe(2);
  });
});
