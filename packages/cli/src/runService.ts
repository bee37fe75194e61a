import type { Logger } from "@ruststream/core";
import type { ExitCode } from "./cliError.js";
import { loadApp } from "./loadApp.js";
import { stopRequests } from "./stopSignals.js";
import { notifySupervisor, supervised } from "./supervise/protocol.js";

export interface RunServiceOptions {
  readonly modulePath: string;
  /** The export that holds the app (default `app`). */
  readonly exportName?: string;
  readonly log: Logger;
  /** Serves health (and with `metrics`, `/metrics`) on this port. */
  readonly httpPort?: number;
  readonly metrics?: boolean;
}

/**
 * Runs one service in this process: loads its app, serves until SIGTERM or SIGINT, then stops
 * pulling, drains the handlers in flight (the app's own shutdown: `RunningApp.stop()`), and
 * reports 0, or 1 when startup failed or a fail-fast policy stopped it.
 */
export async function runService(options: RunServiceOptions): Promise<ExitCode> {
  const log = options.log;
  // Listening before the module loads: a signal during startup stops the app once it is up, instead
  // of killing the process half-connected.
  const stop = stopRequests(log, supervised());
  // A service is a server: it lives until it is told to stop, even on a broker that holds no socket
  // (the memory broker), where an empty event loop would otherwise end the process mid-run.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const { app, url } = await loadApp(
      options.modulePath,
      options.exportName === undefined ? {} : { exportName: options.exportName },
    );
    const server =
      options.httpPort === undefined
        ? undefined
        : // Loaded only when asked for: a service without --http-port loads no HTTP server.
          await (await import("./operations.js")).serveOperations({
            app,
            moduleUrl: url,
            port: options.httpPort,
            metrics: options.metrics ?? false,
            log,
          });
    let running: Awaited<ReturnType<typeof app.start>>;
    try {
      running = await app.start({ logger: log });
    } catch (error) {
      log.error({ error }, "startup failed");
      await server?.close();
      return 1;
    }
    log.info(
      {
        app: app.info.name,
        version: app.info.version,
        subscribers: running.subscribers.join(","),
      },
      "ready",
    );
    notifySupervisor({ type: "ready" });
    const reason = await Promise.race([stop.requested, running.stopped.then(() => "failure")]);
    log.info({ reason }, "stopping");
    const report = await running.stop();
    log.info(
      { failed: report.failed, aborted: report.aborted, unflushed: report.unflushed },
      "stopped",
    );
    await server?.close();
    return report.failed ? 1 : 0;
  } finally {
    clearInterval(keepAlive);
    stop.dispose();
  }
}
