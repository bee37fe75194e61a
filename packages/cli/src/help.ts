// The help texts: what `ruststream --help` and each command's `--help` print.

export const mainHelp = `ruststream: run a RustStream service, and write or serve its AsyncAPI document

Usage:
  ruststream run <module> [options]          run the service the module exports
  ruststream asyncapi gen <module> [options] write its AsyncAPI 3.1 document
  ruststream asyncapi serve <module> [options]
                                             serve the document's viewer on 127.0.0.1

The module is a TypeScript or JavaScript file (no build needed) that exports the app:
  export const app = new RustStream({ name: "orders", version: "1.0.0" });

Options:
  -h, --help      this help; \`ruststream <command> --help\` for a command's
  -v, --version   the CLI's version

Exit codes: 0 clean, 1 failure, 2 usage error.
`;

export const runHelp = `Usage: ruststream run <module> [options]

Loads the app the module exports and runs it: connects its brokers, serves until SIGTERM or SIGINT,
then stops pulling, drains the handlers in flight and exits 0 (1 when startup failed or a fail-fast
policy stopped it; a second signal exits at once).

Options:
  --app <name>            the export that holds the app (default: app)
  --log-level <level>     debug, info, warn or error (default: info)
  --log-format <format>   pretty (readable lines) or json (one object per line); both on stderr
                          (default: pretty)
  --watch                 restart when a file in the module's folder changes (.ts .mts .cts .tsx .js
                          .mjs .cjs .jsx .json; not node_modules, dist or hidden folders); the
                          running service drains and exits before the new one starts
  --workers <n>           run n processes of the service, restart one that dies (with a growing
                          back-off), stop them all on a signal
  --http-port <port>      serve /health/live and /health/ready on 127.0.0.1:<port> (0 picks a free
                          port); with --workers, worker k serves on <port>+k-1
  --metrics               also serve /metrics (Prometheus) there; needs @ruststream/metrics
                          installed beside the service
  -h, --help              this help

Examples:
  ruststream run src/app.ts
  ruststream run src/app.ts --watch --log-level debug
  ruststream run dist/app.js --workers 4 --log-format json --http-port 9464 --metrics
`;

export const asyncapiHelp = `Usage: ruststream asyncapi <gen|serve> <module> [options]

  gen     write the app's AsyncAPI 3.1 document (JSON, or YAML with --yaml) to stdout or a file
  serve   serve the document's viewer on 127.0.0.1 and print its URL

\`ruststream asyncapi gen --help\` and \`ruststream asyncapi serve --help\` for their options.
`;

export const genHelp = `Usage: ruststream asyncapi gen <module> [options]

Writes the AsyncAPI 3.1 document of the app the module exports, from the app's own description
(nothing connects).

Options:
  --app <name>         the export that holds the app (default: app)
  --yaml               YAML instead of JSON
  -o, --output <file>  write to this file instead of stdout
  -h, --help           this help

Examples:
  ruststream asyncapi gen src/app.ts > asyncapi.json
  ruststream asyncapi gen src/app.ts --yaml -o asyncapi.yaml
`;

export const serveHelp = `Usage: ruststream asyncapi serve <module> [options]

Serves the app's AsyncAPI viewer (one self-contained page) on 127.0.0.1 and prints its URL; the
document itself is at /asyncapi.json and /asyncapi.yaml. Runs until SIGTERM or SIGINT.

Options:
  --app <name>    the export that holds the app (default: app)
  --port <port>   the port (default: 8000; 0 picks a free one)
  -h, --help      this help
`;
