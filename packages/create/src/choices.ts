import { basename, resolve } from "node:path";
import type { CreateFlags } from "./args.js";
import {
  type BrokerName,
  brokerNames,
  brokers,
  isBrokerName,
  type KafkaEngine,
  kafkaEngineOf,
} from "./brokers.js";
import { usageError } from "./createError.js";
import { packageNameProblem, unscoped } from "./packageName.js";

/** Everything the project is written from. */
export interface Choices {
  /** Absolute. */
  readonly directory: string;
  readonly name: string;
  readonly broker: BrokerName;
  /** Kafka's only. */
  readonly engine: KafkaEngine | undefined;
}

/** The terminal's questions. */
export interface Prompter {
  /** Resolves to the answer, or to `fallback` when it is left empty. */
  ask(question: string, fallback: string): Promise<string>;
  /** A line for the person answering, such as why an answer was refused. */
  tell(line: string): void;
}

export const defaultDirectory = "ruststream-service";
export const defaultBroker: BrokerName = "file";
export const defaultEngine: KafkaEngine = "kafkajs";

/**
 * Fills in what the flags leave out: asked when there is a prompter (a terminal) and `--yes` is not,
 * else the default where there is a sensible one. Without a terminal, the directory and the broker
 * must be given (or `--yes` taken), so a script never gets a service it did not ask for.
 */
export async function resolveChoices(
  flags: CreateFlags,
  cwd: string,
  prompter: Prompter | undefined,
): Promise<Choices> {
  const asking = flags.yes ? undefined : prompter;
  const directory =
    flags.directory ??
    (flags.name === undefined ? undefined : unscoped(flags.name)) ??
    (asking === undefined ? undefined : await asking.ask("Project directory", defaultDirectory)) ??
    (flags.yes ? defaultDirectory : undefined);
  if (directory === undefined || directory === "") {
    throw usageError(
      "no directory given and no terminal to ask on: name it (npm init @ruststream <directory>), or take the default with --yes",
    );
  }
  const broker = flags.broker ?? (asking === undefined ? undefined : await askBroker(asking));
  const chosen = broker ?? (flags.yes ? defaultBroker : undefined);
  if (chosen === undefined) {
    throw usageError(
      `no broker given and no terminal to ask on: pass --broker ${brokerNames.join("|")}, or --yes for ${defaultBroker}`,
    );
  }
  const engine =
    chosen !== "kafka"
      ? undefined
      : (flags.engine ?? (asking === undefined ? defaultEngine : await askEngine(asking)));
  const absolute = resolve(cwd, directory);
  const name = flags.name ?? (await askName(asking, basename(absolute)));
  const problem = packageNameProblem(name);
  if (problem !== undefined) {
    throw usageError(
      `"${name}" is not a valid npm package name: ${problem}; give one with --name (lowercase, for example my-service)`,
    );
  }
  return { directory: absolute, name, broker: chosen, engine };
}

async function askBroker(prompter: Prompter): Promise<BrokerName> {
  const list = brokerNames.map((b, i) => `  ${i + 1}) ${b}: ${brokers[b].title}`).join("\n");
  for (;;) {
    const answer = (await prompter.ask(`Broker\n${list}\nNumber or name`, defaultBroker)).trim();
    const byNumber = brokerNames[Number(answer) - 1];
    if (/^\d+$/.test(answer) && byNumber !== undefined) return byNumber;
    if (isBrokerName(answer)) return answer;
    prompter.tell(`${answer}: give a number from 1 to ${brokerNames.length}, or a name`);
  }
}

async function askEngine(prompter: Prompter): Promise<KafkaEngine> {
  for (;;) {
    const answer = await prompter.ask(
      "Kafka engine: kafkajs (plain JavaScript) or librdkafka (@confluentinc/kafka-javascript, native)",
      defaultEngine,
    );
    const engine = kafkaEngineOf(answer.trim());
    if (engine !== undefined) return engine;
    prompter.tell(`${answer}: give kafkajs or librdkafka`);
  }
}

async function askName(prompter: Prompter | undefined, fallback: string): Promise<string> {
  if (prompter === undefined) return fallback;
  for (;;) {
    const name = (await prompter.ask("Package name", fallback)).trim();
    const problem = packageNameProblem(name);
    if (problem === undefined) return name;
    // Asked again rather than refused: the person at the terminal can fix it right here.
    prompter.tell(`"${name}" is not a valid npm package name: ${problem}`);
  }
}
