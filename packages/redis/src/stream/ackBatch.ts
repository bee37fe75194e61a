/**
 * The acks of one tick (a batch of handlers settling) leave as one `XACK` of every id, sent when
 * the tick ends or earlier when the subscription flushes (before its next read, at close and
 * shutdown), whichever comes first: one command for the server to run and one reply to read instead
 * of one per entry. Each ack still resolves only once the server has answered, and fails with the
 * command if it fails; what XACK answers (how many it acknowledged) was never read per entry either.
 */
export class AckBatch {
  /** Sends one `XACK` of `ids`; resolves once the server answered. */
  readonly #send: (ids: readonly string[]) => Promise<unknown>;
  /** Ids acked since the last `XACK` went out. */
  #ids: string[] = [];
  #answered: (() => void) | undefined;
  #failed: ((error: unknown) => void) | undefined;
  #sent: Promise<void> | undefined;

  constructor(send: (ids: readonly string[]) => Promise<unknown>) {
    this.#send = send;
  }

  /** Acks `id` with the rest of this tick's; resolves once their `XACK` is answered. */
  add(id: string): Promise<void> {
    if (this.#ids.length === 0) {
      this.#sent = new Promise<void>((resolve, reject) => {
        this.#answered = resolve;
        this.#failed = reject;
      });
      process.nextTick(this.flush);
    }
    this.#ids.push(id);
    return this.#sent!;
  }

  /** Sends what was acked so far now, ahead of what follows on the same link. */
  readonly flush = (): void => {
    const ids = this.#ids;
    if (ids.length === 0) return;
    this.#ids = [];
    const answered = this.#answered!;
    const failed = this.#failed!;
    this.#send(ids).then(() => answered(), failed);
  };

  /** The last `XACK` sent (or waiting for the tick's end), settled once the server answered it. */
  get sent(): Promise<void> | undefined {
    return this.#sent;
  }
}
