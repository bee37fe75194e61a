// Fills a quorum queue from a process of its own (profiled.ts runs it before each drain), so a CPU
// profile of the drain holds the drain alone:
//   node --import tsx src/rabbitmq/fillProcess.ts <url> <queue> <count>
import amqp from "amqplib";
import { fillQueue } from "./queues.js";

const [url, queue, count] = process.argv.slice(2);
if (url === undefined || queue === undefined || !Number.isInteger(Number(count))) {
  throw new Error("fillProcess.ts <url> <queue> <count>");
}
const connection = await amqp.connect(url);
await fillQueue(await connection.createConfirmChannel(), queue, Number(count));
await connection.close();
