import type { ChannelModel } from "amqplib";
import { topologyRefusal } from "../topology/refusal.js";
import { refusalOf } from "./serverError.js";

/**
 * The ready messages of each queue, in order: a passive `queue.declare` each (its `message_count`,
 * which leaves out what consumers hold unacked), on a throwaway channel. The server answers a
 * missing queue by closing the channel it was asked on: never one a consumer or a publish uses, so
 * a queue deleted under the app fails this question alone, naming the queue.
 */
export async function queueCounts(
  model: ChannelModel,
  queues: readonly string[],
): Promise<readonly number[]> {
  const channel = await model.createChannel();
  channel.on("error", () => {});
  try {
    const counts: number[] = [];
    for (const queue of queues) {
      try {
        counts.push((await channel.checkQueue(queue)).messageCount);
      } catch (error) {
        const refusal = refusalOf(error);
        throw topologyRefusal(`queue "${queue}"`, refusal.code, refusal.text, error);
      }
    }
    return counts;
  } finally {
    await channel.close().catch(() => {});
  }
}
