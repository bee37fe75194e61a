import { describe, expect, it } from "vitest";
import { parseCreateArgs } from "../src/args.js";
import { brokerNames } from "../src/brokers.js";
import { type Prompter, resolveChoices } from "../src/choices.js";

/** A terminal whose person gives `answers` in turn; what they were asked and told is kept. */
function person(answers: string[]): Prompter & { asked: string[]; told: string[] } {
  const asked: string[] = [];
  const told: string[] = [];
  return {
    asked,
    told,
    async ask(question, fallback) {
      asked.push(question.split("\n")[0] ?? question);
      const answer = answers.shift();
      if (answer === undefined) throw new Error(`nothing left to answer "${question}"`);
      return answer === "" ? fallback : answer;
    },
    tell(line) {
      told.push(line);
    },
  };
}

const cwd = "/home/me";

describe("without a terminal", () => {
  it("writes what the flags say, the name from the directory", async () => {
    const flags = parseCreateArgs(["billing", "--broker", "redis"]);
    expect(await resolveChoices(flags, cwd, undefined)).toEqual({
      directory: "/home/me/billing",
      name: "billing",
      broker: "redis",
      engine: undefined,
    });
  });

  it("takes every default with --yes: file, ruststream-service, kafkajs for Kafka", async () => {
    expect(await resolveChoices(parseCreateArgs(["--yes"]), cwd, undefined)).toMatchObject({
      directory: "/home/me/ruststream-service",
      name: "ruststream-service",
      broker: "file",
    });
    const kafka = await resolveChoices(parseCreateArgs(["k", "-b", "kafka"]), cwd, undefined);
    expect(kafka.engine).toBe("kafkajs");
  });

  it("takes the directory from a scoped --name", async () => {
    const flags = parseCreateArgs(["--name", "@acme/orders", "-b", "file"]);
    expect(await resolveChoices(flags, cwd, undefined)).toMatchObject({
      directory: "/home/me/orders",
      name: "@acme/orders",
    });
  });

  it("refuses to guess the directory or the broker, naming the flag", async () => {
    await expect(resolveChoices(parseCreateArgs(["-b", "file"]), cwd, undefined)).rejects.toThrow(
      /no directory given .*--yes/,
    );
    await expect(resolveChoices(parseCreateArgs(["svc"]), cwd, undefined)).rejects.toThrow(
      /no broker given .*--broker file\|redis\|kafka\|pulsar\|[\w|]*rabbitmq[\w|]*, or --yes for file/,
    );
  });

  it("refuses a directory whose name is no package name, pointing at --name", async () => {
    const flags = parseCreateArgs(["My Service", "-b", "file"]);
    await expect(resolveChoices(flags, cwd, undefined)).rejects.toThrow(
      /"My Service" is not a valid npm package name: it has capital letters; give one with --name/,
    );
  });
});

describe("on a terminal", () => {
  it("asks for what the flags leave out, Enter taking the default", async () => {
    const terminal = person(["shop", "3", "", ""]);
    const choices = await resolveChoices(parseCreateArgs([]), cwd, terminal);
    expect(choices).toEqual({
      directory: "/home/me/shop",
      name: "shop",
      broker: "kafka",
      engine: "kafkajs",
    });
    expect(terminal.asked).toEqual([
      "Project directory",
      "Broker",
      "Kafka engine: kafkajs (plain JavaScript) or librdkafka (@confluentinc/kafka-javascript, native)",
      "Package name",
    ]);
  });

  it("asks again after an answer it cannot use, saying why", async () => {
    const terminal = person(["rabbit", "pulsar", "Bad Name", "good-name"]);
    const choices = await resolveChoices(parseCreateArgs(["svc"]), cwd, terminal);
    expect(choices).toMatchObject({ broker: "pulsar", name: "good-name" });
    expect(terminal.told).toEqual([
      `rabbit: give a number from 1 to ${brokerNames.length}, or a name`,
      '"Bad Name" is not a valid npm package name: it has capital letters',
    ]);
  });

  it("asks nothing with --yes or with every flag given", async () => {
    await resolveChoices(parseCreateArgs(["--yes"]), cwd, person([]));
    await resolveChoices(
      parseCreateArgs(["svc", "-b", "kafka", "--engine", "kafkajs", "--name", "svc"]),
      cwd,
      person([]),
    );
  });
});
