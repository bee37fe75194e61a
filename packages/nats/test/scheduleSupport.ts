import { ManualClock } from "@ruststream/core";
import { uniqueName } from "@ruststream/tooling-testkit";
import {
  type ConnectedNatsBroker,
  type JetStreamPublisher,
  JetStreamSubject,
  NatsPublish,
} from "../src/index.js";
import { openedPerTest } from "./targets.js";

/** What a schedule test's stream takes besides schedules. */
export interface ScheduleStream {
  readonly messageSchedules?: boolean;
  readonly messageTtl?: boolean;
}

/**
 * A stream of its own over `<stream>.>` for each call, declared through a subscription to its target
 * subject `<stream>.due`; connections and streams go after each test. On the stand-in (a
 * ManualClock) `advance` moves its clock; on the server time passes by itself.
 */
export function scheduleStreams() {
  const { connections, streams } = openedPerTest();
  return async (
    connect: () => Promise<ConnectedNatsBroker>,
    { messageSchedules = true, messageTtl = false }: ScheduleStream = {},
  ) => {
    const connected = await connect();
    connections.push(connected);
    const stream = uniqueName("sched");
    streams.push(stream);
    const target = `${stream}.due`;
    await connected.subscribe(
      new JetStreamSubject(target, {
        stream,
        declare: { subjects: [`${stream}.>`], storage: "memory", messageSchedules, messageTtl },
      }),
    );
    const publisher = (await new NatsPublish({ jetStream: true }).pair(
      connected,
    )) as JetStreamPublisher;
    const last = (subject: string) => connected.link.message(stream, { lastOn: subject });
    const advance = (ms: number) => {
      if (connected.clock instanceof ManualClock) connected.clock.advance(ms);
    };
    const manual = connected.clock instanceof ManualClock;
    return { connected, stream, target, publisher, last, advance, manual };
  };
}

/** The error `work` was refused with; fails when it was not. */
export async function refusal(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("the publish was not refused");
}
