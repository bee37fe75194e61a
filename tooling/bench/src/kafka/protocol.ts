// What main.ts and the producer process (producer.ts) say to each other over IPC.

export type ProducerCommand =
  /** Create `topic` with `partitions` partitions and write orders 0..count-1 round robin over them. */
  | {
      readonly kind: "fill";
      readonly topic: string;
      readonly partitions: number;
      readonly count: number;
    }
  /** Answer how far `group` committed on `topic` against the partitions' ends, then delete it. */
  | { readonly kind: "finish"; readonly topic: string; readonly group: string }
  | { readonly kind: "exit" };

export type ProducerReply =
  | { readonly kind: "ready" }
  | { readonly kind: "filled"; readonly ms: number }
  | {
      readonly kind: "finished";
      /** Records past the group's committed offset, summed over the partitions. */
      readonly lag: number;
      /** Per partition: committed / end, for the error when the lag is not 0. */
      readonly partitions: string;
    }
  | { readonly kind: "failed"; readonly message: string };
