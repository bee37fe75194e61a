import type { AppState, ConnectionChange, RuntimeEvent } from "@ruststream/core";

/** Where the app is, as the health probe last heard; `idle` before its first start. */
export type WatchedState = AppState | "idle";

/**
 * Follows an app's life from its runtime events (cold-path events only: a start, a stop, a broker
 * connection changing state, a subscription starting or ending, work beside the handlers failing
 * or recovering), so a probe reads it without touching the app.
 */
export class HealthWatch {
  #state: WatchedState = "idle";
  #failure: unknown;
  /** Each broker connection's last state, by the name the runtime gives it. */
  readonly #brokers = new Map<string, ConnectionChange>();
  readonly #started = new Set<string>();
  readonly #ended = new Map<string, unknown>();
  /** The background sources failing now (a failure, no recovery since), with their last error. */
  readonly #failing = new Map<string, unknown>();

  readonly observe = (event: RuntimeEvent): void => {
    switch (event.type) {
      case "app-state":
        if (event.state === "starting") {
          // A new start: what the last run left behind says nothing about this one.
          this.#brokers.clear();
          this.#started.clear();
          this.#ended.clear();
          this.#failing.clear();
          this.#failure = undefined;
        }
        this.#state = event.state;
        if (event.failure !== undefined) this.#failure = event.failure;
        return;
      case "broker-connection": {
        const { state, reason } = event;
        this.#brokers.set(event.broker, reason === undefined ? { state } : { state, reason });
        return;
      }
      case "subscription":
        if (event.state === "started") this.#started.add(event.subscriber);
        else this.#ended.set(event.subscriber, event.error);
        return;
      case "background-failure":
        this.#failing.set(event.source, event.error);
        return;
      case "background-recovered":
        this.#failing.delete(event.source);
        return;
      default:
        return;
    }
  };

  get state(): WatchedState {
    return this.#state;
  }

  /**
   * Down once the app has stopped (or failed to start), or while one of its broker connections is
   * lost (its client gave up, or is refused for good): a restart is the cure for both.
   */
  get live(): boolean {
    return this.notLive().length === 0;
  }

  /** Why the app is not live; empty when it is. */
  notLive(): string[] {
    if (this.#state === "stopped") return this.#stopped();
    return this.#connections("lost");
  }

  /** Why the app is not ready; empty when it is. */
  notReady(): string[] {
    switch (this.#state) {
      case "idle":
        // An app started before health(app) was called tells this probe nothing of that run.
        return [
          "the app has not been started since health(app) was called: call health(app) before app.start()",
        ];
      case "starting": {
        const brokers = [...this.#brokers]
          .filter(([, change]) => change.state === "connected")
          .map(([name]) => name);
        return [
          `the app is starting (brokers connected: ${list(brokers)}; subscriptions started: ${list([...this.#started])})`,
        ];
      }
      case "stopping":
        return ["the app is stopping"];
      case "stopped":
        return this.#stopped();
      case "ready": {
        const why = this.#connections("reconnecting", "lost", "closed");
        for (const [subscriber, error] of this.#ended) {
          why.push(
            error === undefined
              ? `the subscription of ${subscriber} has ended: it receives nothing more`
              : `the subscription of ${subscriber} failed: ${describe(error)}`,
          );
        }
        for (const [source, error] of this.#failing) {
          why.push(`${source} is failing: ${describe(error)}`);
        }
        return why;
      }
    }
  }

  #stopped(): string[] {
    return [
      this.#failure === undefined
        ? "the app has stopped"
        : `the app has stopped on a failure: ${describe(this.#failure)}`,
    ];
  }

  /** A line for each broker connection in one of `states`: its name, state and the client's reason. */
  #connections(...states: readonly ConnectionChange["state"][]): string[] {
    const why: string[] = [];
    for (const [broker, { state, reason }] of this.#brokers) {
      if (!states.includes(state)) continue;
      why.push(`broker ${broker} is ${state}${reason === undefined ? "" : `: ${reason}`}`);
    }
    return why;
  }
}

function list(names: readonly string[]): string {
  return names.length === 0 ? "none yet" : names.join(", ");
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
