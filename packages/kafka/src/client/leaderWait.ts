// Kafka's error codes for a partition whose leader is being elected or has just moved: a topic
// the cluster created a moment ago, or a leader that failed over. The question is right, only
// asked too early or of the wrong broker, so it is worth asking again once the client's metadata
// catches up (both engines carry the broker's code on the error as `code`).
const LEADER_NOT_AVAILABLE = 5;
const NOT_LEADER_OR_FOLLOWER = 6;

// How long a partition may go without a leader before the question fails after all: a KRaft
// election on a loaded machine takes well under a second.
const LEADER_WAIT_MS = 10_000;

/** Whether `error` is the cluster saying a partition's leader is not settled yet. */
export function isLeaderMoving(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === LEADER_NOT_AVAILABLE || code === NOT_LEADER_OR_FOLLOWER;
}

/**
 * Asks a partition-level question (watermarks, offsets by time) again while the cluster answers
 * that the partition's leader is not settled, refreshing the client's metadata in between; any
 * other error, or a leader still missing at the deadline, fails as it came.
 */
export async function whileLeaderMoves<T>(
  ask: () => Promise<T>,
  refresh: () => Promise<unknown> = async () => {},
): Promise<T> {
  const deadline = Date.now() + LEADER_WAIT_MS;
  for (;;) {
    try {
      return await ask();
    } catch (error) {
      if (!isLeaderMoving(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
      await refresh().catch(() => undefined);
    }
  }
}
