import { parseArgs } from "node:util";
import {
  type BrokerName,
  brokerNames,
  isBrokerName,
  type KafkaEngine,
  kafkaEngineOf,
} from "./brokers.js";
import { usageError } from "./createError.js";

/** The command line, checked: what it says, and nothing made up for what it leaves out. */
export interface CreateFlags {
  /** Where the project goes (the one positional argument). */
  readonly directory: string | undefined;
  readonly broker: BrokerName | undefined;
  readonly engine: KafkaEngine | undefined;
  /** The package name (default: the directory's name). */
  readonly name: string | undefined;
  /** Take the default of everything not given, and ask nothing. */
  readonly yes: boolean;
  /** Install the dependencies once the files are written (`--no-install` skips it). */
  readonly install: boolean;
  readonly help: boolean;
  readonly version: boolean;
}

/** Parses the arguments npm passes after `npm init @ruststream <dir> --`. */
export function parseCreateArgs(argv: readonly string[]): CreateFlags {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [directory, ...extra] = positionals;
  if (extra.length > 0) {
    throw usageError(`one directory only; also given: ${extra.join(" ")}`);
  }
  const broker = values.broker;
  if (broker !== undefined && !isBrokerName(broker)) {
    throw usageError(`--broker ${broker}: give one of ${brokerNames.join(", ")}`);
  }
  const engine = values.engine === undefined ? undefined : kafkaEngineOf(values.engine);
  if (values.engine !== undefined && engine === undefined) {
    throw usageError(
      `--engine ${values.engine}: give kafkajs, or librdkafka (also called confluent)`,
    );
  }
  if (engine !== undefined && broker !== undefined && broker !== "kafka") {
    throw usageError(`--engine is Kafka's: drop it, or give --broker kafka`);
  }
  return {
    directory,
    broker,
    engine,
    name: values.name,
    yes: values.yes,
    install: !values["no-install"],
    help: values.help,
    version: values.version,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      broker: { type: "string", short: "b" },
      engine: { type: "string" },
      name: { type: "string" },
      yes: { type: "boolean", short: "y", default: false },
      "no-install": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
      version: { type: "boolean", short: "v", default: false },
    },
  });
}
