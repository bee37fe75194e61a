import type { HttpRouteResponse, HttpRoutes, RustStream } from "@ruststream/core";
import { HealthWatch, type WatchedState } from "./healthWatch.js";

/** An app's liveness and readiness, for an orchestrator's probes. */
export interface Health {
  /**
   * False once the app has stopped, or failed to start, and while a broker connection is `lost`
   * (its client gave up, or is refused for good): a restart is the cure.
   */
  readonly live: boolean;
  /**
   * True once every broker is connected, every subscription started and the startup hooks have run
   * (as `app.start()` resolves); false again while it stops, while a broker connection is not
   * `connected` (reconnecting, lost), when a subscription has ended, or while work beside the
   * handlers is failing (a `background-failure` with no `background-recovered` since).
   */
  readonly ready: boolean;
  /** Where the app is: `idle` before its first start, then the running app's state. */
  readonly state: WatchedState;
  /** Why the app is not live, one line each; empty when it is. */
  readonly notLive: readonly string[];
  /** Why the app is not ready, one line each; empty when it is. */
  readonly notReady: readonly string[];
  /** `/health/live` and `/health/ready`: 200 or 503, with a small JSON body. */
  readonly routes: HttpRoutes;
}

const json = "application/json; charset=utf-8";

function answer(ok: boolean, body: Record<string, unknown>): HttpRouteResponse {
  return { status: ok ? 200 : 503, contentType: json, body: `${JSON.stringify(body)}\n` };
}

/**
 * Follows `app` through every later `app.start()` (it listens to the app's lifecycle events, never
 * to a message's), so call it before starting the app.
 */
export function health(app: RustStream): Health {
  const watch = new HealthWatch();
  app.observe(watch.observe);
  return {
    get live() {
      return watch.live;
    },
    get ready() {
      return watch.notReady().length === 0;
    },
    get state() {
      return watch.state;
    },
    get notLive() {
      return watch.notLive();
    },
    get notReady() {
      return watch.notReady();
    },
    routes: {
      "/health/live": () => {
        const why = watch.notLive();
        const live = why.length === 0;
        return answer(live, { live, state: watch.state, ...(live ? {} : { why }) });
      },
      "/health/ready": () => {
        const why = watch.notReady();
        const ready = why.length === 0;
        return answer(ready, { ready, state: watch.state, ...(ready ? {} : { why }) });
      },
    },
  };
}
