import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, test } from "vitest";
import { CliError } from "../src/cliError.js";
import { optionalPackage } from "../src/optionalPackage.js";
import { fixtures } from "./cli.js";

const serviceUrl = pathToFileURL(join(fixtures, "memoryApp.ts")).href;

test("an optional package neither the service nor the CLI has: exit 1, naming the install", async () => {
  const error = await optionalPackage("@ruststream/not-installed", serviceUrl, "--metrics").catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  expect((error as CliError).exitCode).toBe(1);
  expect((error as CliError).message).toBe(
    `--metrics needs @ruststream/not-installed, which neither the service nor the CLI has: run \`npm install @ruststream/not-installed\` in the service's folder (looked it up from ${join(fixtures, "memoryApp.ts")})`,
  );
});

test("an installed optional package loads, TypeScript source included", async () => {
  const metrics = await optionalPackage<typeof import("@ruststream/metrics")>(
    "@ruststream/metrics",
    serviceUrl,
    "--metrics",
  );
  expect(typeof metrics.prometheusMetrics).toBe("function");
  const asyncapi = await optionalPackage<typeof import("@ruststream/asyncapi")>(
    "@ruststream/asyncapi",
    serviceUrl,
    "asyncapi gen",
  );
  expect(typeof asyncapi.asyncapiDocument).toBe("function");
});
