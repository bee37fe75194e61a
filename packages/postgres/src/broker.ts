import {
  type Broker,
  type ConnectOptions,
  type DescribesServer,
  type ServerDescription,
  systemClock,
} from "@ruststream/core";
import {
  brokerMark,
  describeMark,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  positive,
} from "@ruststream/core/broker";
import { PgDriver } from "./client/pgDriver.js";
import { SqlStore } from "./client/sqlStore.js";
import { ConnectedPostgresBroker } from "./connection.js";
import { MemoryServer } from "./inProcess/memoryServer.js";
import { MemoryStore } from "./inProcess/memoryStore.js";
import { checkOptions, describePostgresServer, type PostgresBrokerOptions } from "./options.js";
import { PostgresOutbox } from "./outbox/outbox.js";
import { OutboxStates } from "./outbox/outboxStates.js";
import { outboxTable } from "./outbox/outboxTable.js";
import { type QueueTable, queueTable } from "./table.js";

/**
 * A PostgreSQL queue broker before it connects: the constructor only checks and records its
 * configuration (no I/O, no timers). `connect()` opens the pool (or takes yours), checks or creates
 * the queue table and listens for wake-ups; `connectInProcess()` runs the same descriptors,
 * publishers and settlement code against an in-process stand-in of the table, for TestApp.
 */
export class PostgresBroker
  implements
    Broker<ConnectedPostgresBroker>,
    InProcessBroker<ConnectedPostgresBroker>,
    DescribesServer
{
  readonly [brokerMark] = "postgres";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: PostgresBrokerOptions;
  readonly #table: QueueTable;
  readonly #poolSize: number;
  readonly #appName: string;
  /** The in-process stand-in of the table: this broker object's own. */
  #inProcess: MemoryServer | undefined;

  constructor(options: PostgresBrokerOptions) {
    checkOptions(options);
    this.#table = queueTable(options.table);
    this.#poolSize = positive("poolSize", options.poolSize, 10);
    this.#appName = options.applicationName ?? "ruststream";
    this.#options = options;
  }

  describeServer(): ServerDescription {
    return describePostgresServer(this.#options);
  }

  async connect(options?: ConnectOptions): Promise<ConnectedPostgresBroker> {
    const given = this.#options.pool;
    const prepare = this.#options.prepare ?? true;
    const driver =
      this.#options.driver ??
      (given === undefined
        ? new PgDriver(
            {
              connectionString: this.#options.url,
              max: this.#poolSize,
              application_name: this.#appName,
              // The key-ordered claim is one large statement whose estimated cost crosses
              // jit_above_cost once the table's statistics count deleted rows: PostgreSQL then
              // compiled it on every claim (about 80 ms of a 5 ms claim, measured on 15). The
              // queue's statements are short; JIT never pays for them.
              options: "-c jit=off",
            },
            { owned: true, applicationName: this.#appName, prepare },
          )
        : new PgDriver(given as never, { owned: false, applicationName: this.#appName, prepare }));
    try {
      const store = await SqlStore.open(driver, this.#table, this.#options.ensureSchema ?? false);
      return await ConnectedPostgresBroker.open(store, this.#options, {
        clock: systemClock,
        inProcess: undefined,
        onState: options?.onState,
      });
    } catch (error) {
      await driver.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Opens the transactional outbox of this broker's queue table: its own table,
   * `<table>_outbox` (created first with `ensureSchema`, else checked to exist; the SQL for a
   * migration is `outboxSchemaSql(table)`), on a connection of its own with these options, listening
   * for the wake-ups its publishes send.
   */
  async connectOutbox(options?: ConnectOptions): Promise<PostgresOutbox> {
    const table = outboxTable(this.#options.table);
    // The relays started later follow the connection's state too (an app's relay reports a loss).
    const states = new OutboxStates(options?.onState);
    const connected = await new PostgresBroker({ ...this.#options, table: table.name }).connect({
      ...options,
      onState: states.listener,
    });
    return new PostgresOutbox(connected, table.name, states);
  }

  async connectInProcess(options: InProcessOptions): Promise<ConnectedPostgresBroker> {
    this.#inProcess ??= new MemoryServer();
    this.#inProcess.attach(options.clock, options.coordinator);
    return ConnectedPostgresBroker.open(new MemoryStore(this.#inProcess), this.#options, {
      clock: options.clock,
      inProcess: this.#inProcess,
      onState: options.onState,
    });
  }
}
