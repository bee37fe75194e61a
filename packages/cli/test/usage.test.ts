import { expect, test } from "vitest";
import { runCli } from "./cli.js";

test("--help lists the commands and exits 0; each command has its own help", async () => {
  const main = await runCli(["--help"]);
  expect(main.code).toBe(0);
  expect(main.stdout).toContain("ruststream run <module>");
  expect(main.stdout).toContain("ruststream asyncapi gen <module>");
  expect(main.stdout).toContain("Exit codes: 0 clean, 1 failure, 2 usage error.");

  const run = await runCli(["run", "--help"]);
  expect(run.code).toBe(0);
  for (const flag of [
    "--app",
    "--log-level",
    "--log-format",
    "--watch",
    "--workers",
    "--http-port",
    "--metrics",
  ]) {
    expect(run.stdout).toContain(flag);
  }
  const gen = await runCli(["asyncapi", "gen", "--help"]);
  expect(gen.code).toBe(0);
  expect(gen.stdout).toContain("--yaml");
  expect(gen.stdout).toContain("-o, --output <file>");
  const serve = await runCli(["asyncapi", "serve", "--help"]);
  expect(serve.code).toBe(0);
  expect(serve.stdout).toContain("--port <port>");
});

test("a wrong command line exits 2 with what is wrong and where the help is", async () => {
  const cases: Array<[string[], RegExp]> = [
    [[], /Usage:/],
    [["deploy"], /deploy: no such command; the commands are run and asyncapi/],
    [
      ["run"],
      /run needs the service's module, for example src\/app.ts\n\(see `ruststream run --help`\)/,
    ],
    [["run", "a.ts", "b.ts"], /run takes one module; also given: b.ts/],
    [["run", "a.ts", "--colour"], /Unknown option '--colour'/],
    [
      ["run", "a.ts", "--log-level", "loud"],
      /--log-level loud: give one of debug, info, warn, error/,
    ],
    [["run", "a.ts", "--log-format", "xml"], /--log-format xml: give one of pretty, json/],
    [["run", "a.ts", "--workers", "0"], /--workers 0: give a whole number from 1 to 256/],
    [
      ["run", "a.ts", "--http-port", "70000"],
      /--http-port 70000: give a whole number from 0 to 65535/,
    ],
    [["run", "a.ts", "--watch", "--workers", "2"], /--watch and --workers do not go together/],
    [
      ["run", "a.ts", "--workers", "3", "--http-port", "65534"],
      /worker k serves on port 65534\+k-1, past 65535/,
    ],
    [
      ["run", "a.ts", "--metrics"],
      /--metrics serves \/metrics on the operations server: give its port with --http-port P/,
    ],
    [["asyncapi"], /Usage: ruststream asyncapi <gen\|serve>/],
    [["asyncapi", "publish", "a.ts"], /asyncapi publish: no such command; give gen or serve/],
    [["asyncapi", "serve", "a.ts", "--port", "x"], /--port x: give a whole number from 0 to 65535/],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(args);
    expect({ args, code: result.code }).toEqual({ args, code: 2 });
    expect(result.stderr + result.stdout).toMatch(message);
  }
});
