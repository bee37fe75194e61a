import type { Broker, Publisher, RunningApp } from "@ruststream/core";

/**
 * The relay's targets from a running app: for each label, a publisher on the app's own connection
 * to that broker (its default publish policy, paired as the runtime pairs it for replies). Call it
 * in `app.afterStartup`, once the connections are open.
 */
export async function relayTargets(
  running: RunningApp,
  brokers: Readonly<Record<string, Broker>>,
): Promise<Record<string, Publisher<never>>> {
  const entries = await Promise.all(
    Object.entries(brokers).map(async ([label, broker]) => {
      const connection = running.connection(broker);
      const publisher = await connection.defaultPublishPolicy().pair(connection);
      return [label, publisher as Publisher<never>] as const;
    }),
  );
  return Object.fromEntries(entries);
}
