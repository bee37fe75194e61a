// What main.ts fills for a row of bench:postgres, and the row's process drains (rows.ts): each kind
// of row reads its orders where its own library keeps them.

/** A queue table of the raw loop's (an id and the payload) or the package's (`schemaSql`). */
export interface TableTrial {
  readonly kind: "table";
  readonly url: string;
  readonly table: string;
  /** The package's queue name, for the full app's rows. */
  readonly queue: string;
  readonly count: number;
}

/** A pg-boss queue in pg-boss's own schema. */
export interface PgBossTrial {
  readonly kind: "pgboss";
  readonly url: string;
  readonly schema: string;
  readonly queue: string;
  readonly count: number;
}

/** graphile-worker jobs of one task in graphile-worker's own schema. */
export interface GraphileTrial {
  readonly kind: "graphile";
  readonly url: string;
  readonly schema: string;
  readonly task: string;
  readonly count: number;
}

/** Outbox rows of one broker label, in the outbox table of `table`, bound for a Redis stream. */
export interface RelayTrial {
  readonly kind: "relay";
  readonly url: string;
  readonly redisUrl: string;
  readonly table: string;
  readonly label: string;
  readonly stream: string;
  readonly count: number;
}

export type PostgresTrial = TableTrial | PgBossTrial | GraphileTrial | RelayTrial;
export type TrialKind = PostgresTrial["kind"];
