// Pulsar's admin REST API, for what the rows need around the timed part: a fresh topic with its
// subscription made before the fill (so nothing filled is dropped for want of a reader), the
// topic's stats to check a row by, and deleting the topic afterwards (the bookie keeps what it was
// given otherwise, and a bench writes gigabytes).
const namespace = "public/default";

function adminUrl(): string {
  const url = process.env.PULSAR_ADMIN_URL;
  if (url === undefined) {
    throw new Error(
      'PULSAR_ADMIN_URL is not set: the bench calls ensureBrokers(["pulsar"]) first; or run `pnpm brokers up pulsar` and export `pnpm brokers env pulsar`',
    );
  }
  return url;
}

async function call(method: string, path: string, body?: string): Promise<Response> {
  const response = await fetch(`${adminUrl()}/admin/v2/persistent/${namespace}/${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body }),
  });
  if (!response.ok) {
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  }
  return response;
}

/** Creates the topic (not partitioned) and a subscription on it at its start. */
export async function createTopic(topic: string, subscription?: string): Promise<void> {
  await call("PUT", topic);
  if (subscription !== undefined) {
    await call(
      "PUT",
      `${topic}/subscription/${subscription}`,
      JSON.stringify({ ledgerId: -1, entryId: -1 }),
    );
  }
}

export interface TopicStats {
  readonly msgInCounter: number;
  readonly subscriptions: Record<string, { msgBacklog: number; unackedMessages: number }>;
}

export async function topicStats(topic: string): Promise<TopicStats> {
  return (await (await call("GET", `${topic}/stats`)).json()) as TopicStats;
}

/**
 * Waits (up to 15 s) for the subscription's backlog to reach 0: acks are sent without an answer,
 * so the broker's count trails the last ack a little. Throws naming what was left.
 */
export async function expectDrained(topic: string, subscription: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const stats = await topicStats(topic);
    const sub = stats.subscriptions[subscription];
    if (sub === undefined) throw new Error(`${topic}: no subscription ${subscription}`);
    if (sub.msgBacklog === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`${topic}: ${sub.msgBacklog} messages left in ${subscription}'s backlog`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Deletes the topic and its data, subscriptions and all. */
export async function deleteTopic(topic: string): Promise<void> {
  await call("DELETE", `${topic}?force=true`);
}
