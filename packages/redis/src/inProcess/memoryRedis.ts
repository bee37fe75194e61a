import type { Clock, Coordinator } from "@ruststream/core";
import type { Link } from "../link/link.js";

/** Placeholder: the in-process stand-in of a Redis server. */
export class MemoryRedis {
  attach(_clock: Clock, _coordinator: Coordinator): void {}
  link(): Link {
    throw new Error("not yet");
  }
}
