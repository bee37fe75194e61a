import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileProducer } from "@ruststream/file/format";
import { afterAll, expect, test } from "vitest";
import { repoRoot, startCli } from "./cli.js";

// examples/orders as it is, run by the CLI on a stream file of its own (ORDERS_FILE, which the
// example reads when its module loads).
const ordersApp = join(repoRoot, "examples", "orders", "src", "app.ts");
const dir = mkdtempSync(join(tmpdir(), "cli-orders-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("examples/orders: starts, handles an order, and stops on SIGTERM with exit 0", async () => {
  const file = join(dir, "orders.ss");
  const cli = startCli(["run", ordersApp], { cwd: dir, env: { ORDERS_FILE: file } });
  await cli.waitFor(
    /INFO {2}ready app=orders version=1.0.0 subscribers="orders,receipts,orders-dlq"/,
  );

  // A second process's order, written into the service's stream file and released, so the
  // service can write its receipt into the same file.
  const producer = FileProducer.open(file);
  await producer.send("orders", new TextEncoder().encode('{"id":7,"sku":"pear","qty":3}'));
  producer.close();

  await cli.waitFor(/INFO {2}order accepted subscriber=orders id=7 sku=pear qty=3/);
  await cli.waitFor(
    /INFO {2}receipt issued subscriber=receipts receipt=\{"orderId":7,"sku":"pear","total":12\}/,
  );

  cli.signal("SIGTERM");
  const exit = await cli.exited;
  expect(exit).toEqual({ code: 0, signal: null });
  expect(cli.stderr()).toMatch(/INFO {2}stopping reason="signal SIGTERM"/);
  expect(cli.stderr()).toMatch(/INFO {2}stopped failed=false aborted=false unflushed=0/);
  expect(cli.stderr()).not.toMatch(/ERROR|WARN/);
});
