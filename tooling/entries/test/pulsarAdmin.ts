// Pulsar's admin REST API, for what the round trips need from the broker itself: subscriptions
// made before anything is published (nothing is lost before a reader comes, whatever the
// retention), and the broker's own reading of a stored entry (peek).
import { requireEnv } from "@ruststream/tooling-testkit";

const adminUrl = (): string => requireEnv("PULSAR_ADMIN_URL");

const topicPath = (topic: string): string => `/admin/v2/persistent/public/default/${topic}`;

/** Creates `topic` with `subscription` at its start. */
export async function createSubscription(topic: string, subscription: string): Promise<void> {
  const response = await fetch(`${adminUrl()}${topicPath(topic)}/subscription/${subscription}`, {
    method: "PUT",
  });
  if (!response.ok)
    throw new Error(
      `creating ${subscription} on ${topic}: ${response.status} ${await response.text()}`,
    );
}

/**
 * The broker's answer to a peek at the `position`-th entry (from 1) a subscription holds: the
 * broker decompresses it with Pulsar's own codecs, so an entry nobody can read answers an error.
 */
export async function peek(
  topic: string,
  subscription: string,
  position: number,
): Promise<{ status: number; text: string }> {
  const response = await fetch(
    `${adminUrl()}${topicPath(topic)}/subscription/${subscription}/position/${position}`,
  );
  const body = await response.text();
  return { status: response.status, text: response.ok ? "" : body.slice(0, 200) };
}
