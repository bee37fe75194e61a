import type { ConnectionChange } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  NatsBroker,
  NatsPublish,
  type NatsSource,
  OrderedJetStreamSubject,
} from "../src/index.js";
import { eventually } from "./env.live.js";
import { OwnServer } from "./ownServer.js";

// Pulls the account may not make (a user denied publishing pull requests), on a server of the
// test's own whose permissions the test changes: the subscription asks again less and less often
// (the server's log holds each refusal, with its time), the connection's state is `lost` with the
// server's reason, and once the permission is given the messages come and the state is
// `connected` again. A named consumer's pulls and an ordered consumer's alike.

const password = "pull-refused";
/** The user the app connects as: allowed everything, or everything but asking for messages. */
const permissions = (pulls: boolean) => `
authorization {
  users: [
    { user: app, password: ${password}, permissions: {
      publish: { allow: [">"]${pulls ? "" : ', deny: ["$JS.API.CONSUMER.MSG.NEXT.>"]'} }
      subscribe: { allow: [">"] }
    } }
  ]
}
`;

/** The times (ms) the server logged refusing a pull request of `stream`'s consumer. */
function refusals(server: OwnServer, stream: string): number[] {
  const times: number[] = [];
  for (const line of server.log().split("\n")) {
    // `[ERR] ... - Publish Violation - Subject "$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>"`
    if (!line.includes(`Violation - Subject "$JS.API.CONSUMER.MSG.NEXT.${stream}.`)) continue;
    const at = /(\d{4})\/(\d\d)\/(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)/.exec(line);
    if (at === null) continue;
    const [, y, mo, d, h, mi, s, fraction] = at;
    const ms = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) + +`0.${fraction}` * 1000;
    times.push(ms);
  }
  return times;
}

let server: OwnServer | undefined;
let connected: ConnectedNatsBroker | undefined;
afterEach(async () => {
  await connected?.shutdown();
  connected = undefined;
  await server?.dispose();
  server = undefined;
});

/**
 * A server of the test's own refusing the app user's pulls, a connection to it recording its
 * state changes, and the first read of a subscription `source` makes on the stream it is given.
 */
async function refusedRead(label: string, source: (stream: string, subject: string) => NatsSource) {
  server = await OwnServer.start({ jetStream: true, config: permissions(false) });
  const stream = uniqueName(label)
    .toUpperCase()
    .replaceAll(/[^A-Z0-9_]/g, "_");
  const subject = `refused.${stream.toLowerCase()}`;
  const changes: ConnectionChange[] = [];
  connected = await new NatsBroker({
    servers: server.url,
    credentials: { user: "app", password },
  }).connect({ onState: (change) => changes.push(change) });
  const subscription = await connected.subscribe(source(stream, subject));
  const next = subscription.next();
  // Answered by the test; a failure before that shuts the connection down under it.
  next.catch(() => undefined);
  return { server, connected, stream, subject, changes, next };
}

it("refused pulls are asked again less and less often, the state is lost with the server's reason, and connected once allowed", async () => {
  const { server, connected, stream, subject, changes, next } = await refusedRead(
    "REFUSED",
    (stream, subject) =>
      new JetStreamSubject(subject, {
        stream,
        durable: "refused",
        pullExpiresMs: 1000,
        declare: { subjects: [subject], storage: "memory" },
      }),
  );

  await eventually(() => connected.state === "lost", 10_000, "the state lost");
  expect(changes[0]?.state).toBe("lost");
  expect(changes[0]?.reason).toMatch(
    new RegExp(`refuses the pulls of consumer "refused" on "${stream}".*Permissions Violation`),
  );
  // Refused at about 0, 1, 3 and 7 s: each wait twice the one before (every second without end
  // before), measured by the server's clock.
  await eventually(() => refusals(server, stream).length >= 4, 20_000, "four refusals");
  const [a, b, c, d] = refusals(server, stream) as [number, number, number, number];
  expect(b - a).toBeGreaterThanOrEqual(900);
  expect(c - b).toBeGreaterThanOrEqual(1800);
  expect(d - c).toBeGreaterThanOrEqual(3600);

  server.reconfigure(permissions(true));
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  await publisher.publish({ name: subject, payload: bytes("allowed") });
  // The next try (8 s after the fourth refusal, at most) is taken.
  const delivery = (await next).value;
  expect(delivery && text(delivery.payload)).toBe("allowed");
  await delivery?.ack();
  await eventually(() => connected.state === "connected", 5_000, "connected again");
  expect(changes.map((change) => change.state)).toEqual(["lost", "connected"]);
}, 45_000);

it("an ordered consumer's refused pulls: the state is lost with the server's reason, and connected once allowed", async () => {
  const { server, connected, stream, subject, changes, next } = await refusedRead(
    "ORDERED_REFUSED",
    (stream, subject) =>
      new OrderedJetStreamSubject(subject, {
        stream,
        pullExpiresMs: 1000,
        declare: { subjects: [subject], storage: "memory" },
      }),
  );

  await eventually(() => connected.state === "lost", 10_000, "the state lost");
  expect(changes[0]?.state).toBe("lost");
  // The consumer the client named, whose pull requests the server refused.
  expect(changes[0]?.reason).toMatch(
    new RegExp(
      `refuses the pulls of consumer "(\\w+)" on "${stream}": Permissions Violation for Publish to "\\$JS\\.API\\.CONSUMER\\.MSG\\.NEXT\\.${stream}\\.\\1"`,
    ),
  );
  // Asked again after 1 s, refused again (the server's log), as a named consumer's.
  await eventually(() => refusals(server, stream).length >= 2, 10_000, "two refusals");

  server.reconfigure(permissions(true));
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  await publisher.publish({ name: subject, payload: bytes("allowed") });
  const delivery = (await next).value;
  expect(delivery && text(delivery.payload)).toBe("allowed");
  await eventually(() => connected.state === "connected", 5_000, "connected again");
  expect(changes.map((change) => change.state)).toEqual(["lost", "connected"]);
}, 30_000);
