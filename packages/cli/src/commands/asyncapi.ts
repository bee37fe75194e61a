import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { HttpRoutes } from "@ruststream/core";
import { integerFlag, moduleArgument, parsedOrUsage } from "../args.js";
import { CliError, type ExitCode, usageError } from "../cliError.js";
import { asyncapiHelp, genHelp, serveHelp } from "../help.js";
import { loadApp } from "../loadApp.js";
import { optionalPackage } from "../optionalPackage.js";
import { writeErr, writeOut } from "../output.js";

const genOptions = {
  app: { type: "string" },
  yaml: { type: "boolean" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
} as const;

const serveOptions = {
  app: { type: "string" },
  port: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type AsyncApiModule = typeof import("@ruststream/asyncapi");

/** `@ruststream/asyncapi`, an optional package: loaded once the command line is known good. */
const asyncapiPackage = (moduleUrl: string, command: string): Promise<AsyncApiModule> =>
  optionalPackage<AsyncApiModule>("@ruststream/asyncapi", moduleUrl, command);

/** The port `asyncapi serve` listens on unless told otherwise. */
export const defaultViewerPort = 8000;

const withNewline = (text: string): string => (text.endsWith("\n") ? text : `${text}\n`);

async function gen(args: readonly string[]): Promise<ExitCode> {
  const { values, positionals } = parsedOrUsage("asyncapi gen", () =>
    parseArgs({ args: [...args], options: genOptions, allowPositionals: true, strict: true }),
  );
  if (values.help === true) {
    await writeOut(genHelp);
    return 0;
  }
  const module = moduleArgument("asyncapi gen", positionals);
  const { app, url } = await loadApp(
    module,
    values.app === undefined ? {} : { exportName: values.app },
  );
  const { asyncapiDocument, asyncapiJson, asyncapiYaml } = await asyncapiPackage(
    url,
    "asyncapi gen",
  );
  const document = asyncapiDocument(app);
  const text = withNewline(values.yaml === true ? asyncapiYaml(document) : asyncapiJson(document));
  if (values.output === undefined) {
    await writeOut(text);
  } else {
    try {
      writeFileSync(values.output, text);
    } catch (error) {
      throw new CliError(
        `-o ${values.output}: ${error instanceof Error ? error.message : String(error)}`,
        1,
        { cause: error },
      );
    }
    writeErr(`wrote ${resolve(values.output)}`);
  }
  return 0;
}

async function serve(args: readonly string[]): Promise<ExitCode> {
  const { values, positionals } = parsedOrUsage("asyncapi serve", () =>
    parseArgs({ args: [...args], options: serveOptions, allowPositionals: true, strict: true }),
  );
  if (values.help === true) {
    await writeOut(serveHelp);
    return 0;
  }
  const module = moduleArgument("asyncapi serve", positionals);
  const port =
    values.port === undefined
      ? defaultViewerPort
      : integerFlag("asyncapi serve", "port", values.port, 0, 65_535);
  const { app, url } = await loadApp(
    module,
    values.app === undefined ? {} : { exportName: values.app },
  );
  const { asyncapiDocument, asyncapiJson, asyncapiViewerHtml, asyncapiYaml } =
    await asyncapiPackage(url, "asyncapi serve");
  const { serveHttp } = await import("@ruststream/health");
  const document = asyncapiDocument(app);
  const title = `${app.info.name} ${app.info.version}`;
  const html = asyncapiViewerHtml(document, { title });
  const routes: HttpRoutes = {
    "/": () => ({ status: 200, contentType: "text/html; charset=utf-8", body: html }),
    "/asyncapi.json": () => ({
      status: 200,
      contentType: "application/json",
      body: asyncapiJson(document),
    }),
    "/asyncapi.yaml": () => ({
      status: 200,
      contentType: "application/yaml",
      body: asyncapiYaml(document),
    }),
  };
  let server: Awaited<ReturnType<typeof serveHttp>>;
  try {
    server = await serveHttp({ port, routes });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CliError(
      code === "EADDRINUSE"
        ? `--port ${port}: the port is in use; pick another with --port (0 picks a free one)`
        : `--port ${port}: ${error instanceof Error ? error.message : String(error)}`,
      1,
      { cause: error },
    );
  }
  await writeOut(`AsyncAPI viewer of ${title}: ${new URL("/", server.url).href}\n`);
  await new Promise<void>((resolveStop) => {
    const stop = (): void => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      resolveStop();
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
  await server.close();
  return 0;
}

/** `ruststream asyncapi gen|serve <module>`. */
export async function asyncapiCommand(args: readonly string[]): Promise<ExitCode> {
  const [sub, ...rest] = args;
  if (sub === "gen") return gen(rest);
  if (sub === "serve") return serve(rest);
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    await writeOut(asyncapiHelp);
    return sub === undefined ? 2 : 0;
  }
  throw usageError(`asyncapi ${sub}: no such command; give gen or serve`, "asyncapi");
}
