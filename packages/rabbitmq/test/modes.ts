import type { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv } from "@ruststream/tooling-testkit";
import { onTestFinished } from "vitest";

/** Where a test's app runs: the same test runs on the in-process stand-in and on the real node. */
export interface Mode {
  readonly name: "in-process stand-in" | "real node";
  /** The broker's URL: the real node's from `RABBITMQ_URL` (a test without it fails), else the stand-in's. */
  url(): string;
  /** Starts `app` for the running test; it is stopped when the test ends. */
  start(app: RustStream): Promise<TestApp>;
}

/** Starts with `begin` and stops the app when the running test ends, passed or failed. */
const stoppedAtTheEnd =
  (begin: (app: RustStream) => Promise<TestApp>) =>
  async (app: RustStream): Promise<TestApp> => {
    const t = await begin(app);
    onTestFinished(async () => {
      await t.stop();
    });
    return t;
  };

export const modes: readonly Mode[] = [
  {
    name: "in-process stand-in",
    url: () => "amqp://in-process.invalid:5672",
    start: stoppedAtTheEnd((app) => TestApp.start(app)),
  },
  {
    name: "real node",
    url: () => requireEnv("RABBITMQ_URL"),
    start: stoppedAtTheEnd((app) => TestApp.startLive(app, { withinMs: 30_000 })),
  },
];
