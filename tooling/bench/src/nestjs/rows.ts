// The rows of bench:nestjs, by key, and `runRow`, which runs one in a row's process of its own
// (../rows/rowChild.ts): one Nest controller (ordersModule.ts) served by Nest's own Kafka transport
// and by our transport strategy on each of @ruststream/kafka's clients, and our plain app on each,
// for reference. Each is timed as the Kafka bench times its rows (../kafka/tally.ts): from the first
// order handled to the last, and for ours, as for the plain app, to the last one acked.
import "reflect-metadata";
import type { LogLevel } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { type MicroserviceOptions, Transport } from "@nestjs/microservices";
import type { RunningApp } from "@ruststream/core";
import { KafkaBroker, type KafkaEngineName, KafkaTopic } from "@ruststream/kafka";
import { RustStreamServer } from "@ruststream/nestjs";
import { fullApp } from "../kafka/packageRows.js";
import type { Row, Trial } from "../kafka/rawRows.js";
import { type Drained, Tally } from "../kafka/tally.js";
import { ordersModule } from "./ordersModule.js";

// kafkajs's warning that its default partitioner changed in 2.0, which Nest's transport logs at
// every start: this bench's rows publish nothing.
process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= "1";

/** Nest's warnings and errors only: its bootstrap lines (and kafkajs's, through it) are no row's work. */
const logger: LogLevel[] = ["error", "warn"];

/**
 * Nest's own Kafka transport (kafkajs, `eachMessage`) at its defaults, but for two settings every
 * row needs: the group named as the bench names it (Nest appends `-server` to it by default), so
 * the bench can check its commits, and reading from the beginning, since a new group starts at the
 * end by default and the topic is filled before the row starts.
 */
const nestKafka: Row = async ({ brokers, topic, group, count }) => {
  const tally = new Tally(count);
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(
    ordersModule(topic, tally),
    {
      transport: Transport.KAFKA,
      options: {
        client: { brokers: brokers.split(",") },
        consumer: { groupId: group },
        postfixId: "",
        subscribe: { fromBeginning: true },
      },
      logger,
    },
  );
  await app.listen();
  await tally.done;
  const drained = tally.drained();
  // kafkajs commits what it resolved as the consumer disconnects (the bench checks it after).
  await app.close();
  return drained;
};

/**
 * The same controller on our strategy: its pattern read from the bench's topic by the bench's
 * group from the beginning (`extras.ruststream.source`), acked as the app's `auto` mode does.
 */
function onStrategy(engine: KafkaEngineName): Row {
  return async ({ brokers, topic, group, count }) => {
    const tally = new Tally(count);
    const server = new RustStreamServer({
      broker: new KafkaBroker({ brokers, engine }),
      name: group,
    });
    const source = new KafkaTopic(topic, { group, commit: "auto", start: "earliest" });
    const app = await NestFactory.createMicroservice(
      ordersModule(topic, tally, { ruststream: { source } }),
      { strategy: server, logger },
    );
    await app.listen();
    await tally.done;
    await server.unwrap<RunningApp>().whenIdle();
    const drained = tally.drained();
    await app.close();
    return drained;
  };
}

interface RowEntry {
  readonly name: string;
  readonly run: Row;
}

const rowTable: Readonly<Record<string, RowEntry>> = {
  "nest-kafka": { name: "Nest's Kafka transport (kafkajs)", run: nestKafka },
  strategy: { name: "Nest on RustStreamServer, librdkafka", run: onStrategy("librdkafka") },
  "strategy-kafkajs": { name: "Nest on RustStreamServer, kafkajs", run: onStrategy("kafkajs") },
  app: { name: "plain app, librdkafka", run: fullApp("librdkafka", "auto") },
  "app-kafkajs": { name: "plain app, kafkajs", run: fullApp("kafkajs", "auto") },
};

export const rowKeys = Object.keys(rowTable);

function rowOf(key: string): RowEntry {
  const row = rowTable[key];
  if (row === undefined) throw new Error(`unknown row "${key}": ${rowKeys.join(", ")}`);
  return row;
}

/** A row's printed name by its key; throws for a key the table does not hold. */
export function rowName(key: string): string {
  return rowOf(key).name;
}

/** The row module's entry (../rows/protocol.ts): one run of the row `key` on a filled topic. */
export function runRow(key: string, trial: unknown): Promise<Drained> {
  return rowOf(key).run(trial as Trial);
}
