// What the bench process and its load generator say to each other over the fork's IPC channel.

/** Bench -> generator. */
export type GeneratorCommand =
  /** `XADD key * _payload <512 B>`, `count` times, before the consumer starts. */
  | { readonly kind: "fill-stream"; readonly key: string; readonly count: number }
  /**
   * `XADD key * _payload <512-byte JSON order>`, ids 0..count-1, before the consumer starts (the
   * drain bench, drain/).
   */
  | { readonly kind: "fill-stream-orders"; readonly key: string; readonly count: number }
  /** `LPUSH key <frame>`, `count` values, before the consumer starts. */
  | { readonly kind: "fill-list"; readonly key: string; readonly count: number }
  /**
   * `PUBLISH channel <frame>`, `count` times, while the consumer is subscribed, never more than
   * `window` messages ahead of what the consumer last reported.
   */
  | {
      readonly kind: "publish";
      readonly channel: string;
      readonly count: number;
      readonly window: number;
    }
  /** The consumer has received `received` messages of the running publish. */
  | { readonly kind: "credit"; readonly received: number }
  | { readonly kind: "exit" };

/** Generator -> bench: the answer to each fill or publish, in order. */
export type GeneratorReply =
  | { readonly kind: "ready" }
  | { readonly kind: "done"; readonly ms: number }
  | { readonly kind: "failed"; readonly message: string };
