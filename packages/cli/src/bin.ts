#!/usr/bin/env node
import { main } from "./main.js";

// Exits explicitly: a service's module may leave timers or sockets of its own behind, which must
// not keep the process alive once the app has stopped.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`ruststream: ${String(error)}\n`);
    process.exit(1);
  },
);
