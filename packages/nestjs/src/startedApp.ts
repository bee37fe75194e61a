import type { RunningApp, RustStream } from "@ruststream/core";

/**
 * The running app `app` becomes, for work inside its own handlers (a streamed reply's values are
 * published through it). Learnt from its startup hook, so whoever starts it counts: the strategy's
 * `listen()`, the module's bootstrap, or a test's `TestApp.start(app)`. A handler may run before
 * the hook (the subscriptions open first): it waits for it. A later start of the same app is its
 * own running app.
 */
export function startedApp(app: RustStream): () => Promise<RunningApp> {
  let resolveFirst: (running: RunningApp) => void = () => {};
  let started = new Promise<RunningApp>((resolve) => {
    resolveFirst = resolve;
  });
  app.afterStartup((running) => {
    resolveFirst(running);
    started = Promise.resolve(running);
  });
  return () => started;
}
