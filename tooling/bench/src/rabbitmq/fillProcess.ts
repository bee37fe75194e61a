// Fills a queue from a process of its own (profiled.ts runs it before each drain), so a CPU profile
// of the drain holds the drain alone:
//   node --import tsx src/rabbitmq/fillProcess.ts <url> <queue> <count> <quorum|classic>
import amqp from "amqplib";
import { fillQueue, queueOfKey } from "./queues.js";

const [url, queue, count, type = "quorum"] = process.argv.slice(2);
if (url === undefined || queue === undefined || !Number.isInteger(Number(count))) {
  throw new Error("fillProcess.ts <url> <queue> <count> <quorum|classic>");
}
const connection = await amqp.connect(url);
const { type: queueType } = queueOfKey(`row@${type}`);
await fillQueue(await connection.createConfirmChannel(), queue, Number(count), queueType);
await connection.close();
