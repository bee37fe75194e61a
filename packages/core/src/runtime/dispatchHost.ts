import type { Coordinator } from "../broker/inProcess.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { Source } from "../source.js";
import type { Subscription } from "../subscription.js";
import type { Observer } from "./events.js";
import type { BatchMiddleware, ConsumeMiddleware } from "./middleware.js";
import type { OutPublisher } from "./out.js";
import type { OutPublisherBase, PublishPipeline, PublishRoute } from "./publishing.js";
import type { SubscriberSpec } from "./subscriberSpec.js";
import type { WorkCounter } from "./workCounter.js";

/** What a subscriber's dispatch needs from the running app. */
export interface DispatchHost {
  readonly clock: Clock;
  /** Told when a delivery is held for a delayed retry copy (a harness's; else told nothing). */
  readonly coordinator: Coordinator;
  readonly signal: AbortSignal;
  readonly work: WorkCounter;
  readonly pipeline: PublishPipeline;
  readonly consume: readonly ConsumeMiddleware[];
  readonly consumeBatch: readonly BatchMiddleware[];
  /** Undefined when nobody observes, so the hot path builds no events. */
  readonly emit: Observer | undefined;
  failFast(subscriber: string, reason: unknown): void;
}

/** The publishers a handler's context offers, by the names `.publishes({ ... })` gave them. */
export type OutRecord = Readonly<Record<string, OutPublisher<unknown, unknown>>>;

/** The same, unbound: each handler's context binds them to its delivery. */
export type OutBases = Readonly<Record<string, OutPublisherBase>>;

/** Everything resolved at startup for one subscriber. */
export interface SubscriberWiring {
  readonly spec: SubscriberSpec;
  readonly name: string;
  readonly source: Source;
  readonly subscription: Subscription;
  /** Publishes replies, retry copies and dead-lettered copies. */
  readonly route: PublishRoute;
  readonly out: OutBases;
  readonly log: Logger;
}

/** A pending wait, or `undefined` when the dispatch may go straight on. */
export type Awaiting = Promise<void> | undefined;
