import type { Channel } from "amqplib";

// AMQP 0.9.1's tx class (class 90): tx.select puts a channel in transaction mode, tx.commit makes
// what the channel published since the last commit take effect. amqplib encodes and decodes these
// methods but offers no call for them: they go through the channel's own `rpc`, by their method ids
// (class id << 16 | method id, as the specification numbers them). tx.rollback is not used: a
// transaction's messages are held here until its commit, so an aborted one sends nothing.

const txClass = 90 << 16;
const select = txClass | 10;
const selectOk = txClass | 11;
const commit = txClass | 20;
const commitOk = txClass | 21;

interface RpcChannel {
  rpc(method: number, fields: Record<string, never>, expect: number): Promise<unknown>;
}

function rpcOf(channel: Channel): RpcChannel {
  const candidate = channel as unknown as Partial<RpcChannel>;
  if (typeof candidate.rpc !== "function") {
    // An amqplib without it: fail loudly where transactions start, never silently.
    throw new Error(
      "this amqplib has no channel.rpc, which transactions (tx.select, tx.commit) go through: use amqplib 2.x",
    );
  }
  return candidate as RpcChannel;
}

/** Puts the channel in transaction mode (it can no longer be a confirm channel). */
export async function txSelect(channel: Channel): Promise<void> {
  await rpcOf(channel).rpc(select, {}, selectOk);
}

/**
 * Commits what the channel published since its last commit. The server answers once every message
 * is routed and enqueued, after the returns of the `mandatory` messages it could route nowhere.
 */
export async function txCommit(channel: Channel): Promise<void> {
  await rpcOf(channel).rpc(commit, {}, commitOk);
}
