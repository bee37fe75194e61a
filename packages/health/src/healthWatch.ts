import type { AppState, RuntimeEvent } from "@ruststream/core";

/** Where the app is, as the health probe last heard; `idle` before its first start. */
export type WatchedState = AppState | "idle";

/**
 * Follows an app's life from its runtime events (cold-path events only: a start, a stop, a broker
 * connecting or shutting down, a subscription starting or ending), so a probe reads it without
 * touching the app.
 */
export class HealthWatch {
  #state: WatchedState = "idle";
  #failure: unknown;
  readonly #brokers = new Map<string, boolean>();
  readonly #started = new Set<string>();
  readonly #ended = new Map<string, unknown>();

  readonly observe = (event: RuntimeEvent): void => {
    switch (event.type) {
      case "app-state":
        if (event.state === "starting") {
          // A new start: what the last run left behind says nothing about this one.
          this.#brokers.clear();
          this.#started.clear();
          this.#ended.clear();
          this.#failure = undefined;
        }
        this.#state = event.state;
        if (event.failure !== undefined) this.#failure = event.failure;
        return;
      case "broker-connection":
        this.#brokers.set(event.broker, event.connected);
        return;
      case "subscription":
        if (event.state === "started") this.#started.add(event.subscriber);
        else this.#ended.set(event.subscriber, event.error);
        return;
      default:
        return;
    }
  };

  get state(): WatchedState {
    return this.#state;
  }

  /** Down only once the app has stopped (or failed to start): nothing is served, restart it. */
  get live(): boolean {
    return this.#state !== "stopped";
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
        const brokers = [...this.#brokers].filter(([, up]) => up).map(([name]) => name);
        return [
          `the app is starting (brokers connected: ${list(brokers)}; subscriptions started: ${list([...this.#started])})`,
        ];
      }
      case "stopping":
        return ["the app is stopping"];
      case "stopped":
        return [
          this.#failure === undefined
            ? "the app has stopped"
            : `the app has stopped on a failure: ${describe(this.#failure)}`,
        ];
      case "ready": {
        const why: string[] = [];
        for (const [broker, up] of this.#brokers) {
          if (!up) why.push(`broker ${broker} is not connected`);
        }
        for (const [subscriber, error] of this.#ended) {
          why.push(
            error === undefined
              ? `the subscription of ${subscriber} has ended: it receives nothing more`
              : `the subscription of ${subscriber} failed: ${describe(error)}`,
          );
        }
        return why;
      }
    }
  }
}

function list(names: readonly string[]): string {
  return names.length === 0 ? "none yet" : names.join(", ");
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
