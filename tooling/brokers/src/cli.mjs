#!/usr/bin/env node
// @ts-check
// pnpm brokers up [redis|kafka|pulsar|rabbitmq|nats|postgres|kafka-cluster|redis-cluster|redis-sentinel|nats-cluster|rabbitmq-cluster|all] | down [...] | status
import { brokers, parseNames } from "./registry.mjs";

const [command, ...rest] = process.argv.slice(2);
const log = (/** @type {string} */ line) => process.stdout.write(`${line}\n`);

async function main() {
  switch (command) {
    case "up": {
      for (const name of parseNames(rest)) {
        const result = await brokers[name].up(log);
        log(
          result.already
            ? `${name}: already running at ${result.address}`
            : `${name}: up at ${result.address} in ${(result.ms / 1000).toFixed(1)} s`,
        );
      }
      return;
    }
    case "down": {
      for (const name of parseNames(rest, { withCluster: true })) {
        const stopped = await brokers[name].down(log);
        log(`${name}: ${stopped ? "stopped" : "was not running"}`);
      }
      return;
    }
    case "status": {
      for (const name of parseNames(rest, { withCluster: true })) {
        /** @type {{ running: boolean, address: string, pid?: number, rssMiB?: number | undefined }[]} */
        const lines = await brokers[name].status();
        for (const s of lines) {
          const mem = s.rssMiB === undefined ? "" : `, ${s.rssMiB} MiB resident`;
          log(`${name}: ${s.address} ${s.running ? `running (pid ${s.pid}${mem})` : "stopped"}`);
        }
      }
      return;
    }
    case "env": {
      for (const name of parseNames(rest)) {
        for (const [k, v] of Object.entries(brokers[name].env())) log(`export ${k}=${v}`);
      }
      return;
    }
    default:
      log(
        "usage: pnpm brokers up|down|status|env [redis|kafka|pulsar|rabbitmq|nats|postgres|kafka-cluster|redis-cluster|redis-sentinel|nats-cluster|rabbitmq-cluster|all]",
      );
      process.exitCode = command === undefined || command === "help" ? 0 : 2;
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
