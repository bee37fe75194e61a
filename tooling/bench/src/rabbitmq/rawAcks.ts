// How a raw loop acks what it handled, whatever its client: each message, or runs of them with
// AMQP's `multiple`, as a careful user batches them.

/** Acks one message, alone or (`multiple`) with every earlier unacked one on its channel. */
export type AckWith<M> = (message: M, multiple: boolean) => void;

export interface RawAcks<M> {
  handled(message: M): void;
  /** Acks what is still unacked once the last order is in hand. */
  flush(): void;
}

/** A way of acking, given the client's own ack. */
export type AckStrategy = <M>(ack: AckWith<M>, prefetch: number) => RawAcks<M>;

/** `basic.ack` of each message: what the issue names as the raw consumer. */
export const ackEach: AckStrategy = (ack) => ({
  handled: (message) => ack(message, false),
  flush: () => {},
});

/**
 * `basic.ack` with `multiple` on the latest message once a quarter of the prefetch is unacked, and
 * at the end of the event loop's turn for the rest: a fraction of the frames `ackEach` sends.
 */
export const ackMultiple: AckStrategy = <M>(ack: AckWith<M>, prefetch: number) => {
  const every = Math.max(1, Math.floor(prefetch / 4));
  let latest: M | undefined;
  let unacked = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (latest === undefined) return;
    ack(latest, true);
    latest = undefined;
    unacked = 0;
  };
  return {
    handled: (message: M) => {
      latest = message;
      if (++unacked >= every) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
};
