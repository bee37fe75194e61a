/** What a {@link RustStreamRecord} carries besides its data. */
export interface RustStreamRecordOptions<TOptions = unknown> {
  /** Keeps messages with one key in order, on brokers that partition or order by key. */
  readonly partitionKey?: string | Uint8Array;
  /** Headers of this message, beside (and over) the dispatch hook's metadata. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The broker's own per-message options (a Kafka partition, a RabbitMQ priority, a delay). */
  readonly options?: TOptions;
}

/**
 * The data of one `emit` or `send` with the settings of its publish, as Nest's own transports take
 * theirs (`RmqRecord`, `NatsRecord`): `client.emit("orders", new RustStreamRecord(order, {
 * partitionKey: order.sku }))`. The handler receives `data`; the rest is the publish's.
 */
export class RustStreamRecord<TData = unknown, TOptions = unknown> {
  readonly data: TData;
  readonly options: RustStreamRecordOptions<TOptions>;

  constructor(data: TData, options: RustStreamRecordOptions<TOptions> = {}) {
    this.data = data;
    this.options = options;
  }
}
