import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Delivery,
  HeaderMap,
  headerNames,
  type OutgoingMessage,
  systemClock,
} from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { describe, expect, it } from "vitest";
import {
  type ConnectedFileBroker,
  FileBroker,
  FileStream,
  type FileSubscription,
  sidecarPath,
} from "../src/index.js";
import { COPY_OF_HEADER } from "../src/names.js";
import { tempDir, text, utf8 } from "./tempDir.js";

// A named consumer restarted (a crash: what it had not settled on disk is read again) delivers
// again only what it had not settled, and never a message whose retry copy or dead letter it had
// already written into the file: the runtime writes the copy, then acks, and a crash between the
// two, or a held message keeping the position behind it, used to deliver the original again, so it
// was copied again (a second dead letter). Each script runs on a real file through `connect()` and
// on the in-process stand-in (the same code over a private file), which must agree.

const dir = tempDir("ruststream-file-held-");

type Connect = (path: string) => Promise<ConnectedFileBroker>;

const real: Connect = (path) => new FileBroker({ path }).connect();
const inProcess: Connect = (path) =>
  new FileBroker({ path }).connectInProcess({
    coordinator: new CountingCoordinator(),
    clock: systemClock,
  });

const stream = (key: string, consumer = "svc") =>
  new FileStream(key, { consumer, start: "beginning" });

async function take(sub: FileSubscription): Promise<Delivery> {
  const next = await sub.next();
  if (next.done) throw new Error("the subscription ended");
  return next.value;
}

/** The payloads a fresh subscription reads until the file's end (a marker message, published last). */
async function readAll(connected: ConnectedFileBroker, key: string, consumer = "svc") {
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: key, payload: utf8("end") });
  const sub = await connected.subscribe(stream(key, consumer));
  const seen: string[] = [];
  for (;;) {
    const d = await take(sub);
    const body = text(d.payload);
    seen.push(body);
    if (body === "end") break;
  }
  await sub.close();
  return seen;
}

/** As the runtime publishes a retry copy (to the same key) or a dead letter, for `cause`. */
function copyOf(cause: Delivery, kind: "retry" | "dead letter" | "reply"): OutgoingMessage {
  const headers = cause.headers.clone().set(headerNames.retryCount, "1");
  if (kind === "reply") return { name: "replies", payload: cause.payload, cause };
  if (kind === "retry") {
    return { name: cause.name, payload: cause.payload, headers, cause, replacesCause: true };
  }
  return {
    name: `${cause.name}.dlq`,
    payload: cause.payload,
    headers,
    deadLetterOrigin: { source: cause.name, position: String(cause.position), reason: "error" },
    cause,
    replacesCause: true,
  };
}

/**
 * m1..m4 published; the first life reads them all, acks m2..m4 and leaves m1 unsettled (held, as
 * a delayed retry holds it), or writes `kind` for m2 and never acks m2 (killed before the ack).
 */
async function firstLife(
  connected: ConnectedFileBroker,
  key: string,
  what: "held" | "retry" | "dead letter" | "reply",
): Promise<void> {
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  for (const body of ["m1", "m2", "m3", "m4"]) {
    await publisher.publish({ name: key, payload: utf8(body) });
  }
  const sub = await connected.subscribe(stream(key));
  const [m1, m2, m3, m4] = [await take(sub), await take(sub), await take(sub), await take(sub)];
  if (what === "held") {
    for (const d of [m2!, m3!, m4!]) await d.ack();
  } else {
    await m1!.ack();
    await publisher.publish(copyOf(m2!, what));
    for (const d of [m3!, m4!]) await d.ack();
  }
  // The crash: what was not settled stays unsettled in the file's stored position.
  await sub.close();
}

async function both(
  label: string,
  script: (connected: ConnectedFileBroker, key: string) => Promise<string[]>,
): Promise<string[]> {
  const key = label.replace(/\W/g, "-");
  const path = join(dir, `${key}.ss`);
  const onFile = await real(path);
  const live = await script(onFile, key).finally(() => onFile.shutdown());
  const stand = await inProcess(join(dir, `${key}-in-process.ss`));
  const local = await script(stand, key).finally(() => stand.shutdown());
  expect(local).toEqual(live);
  return live;
}

describe("a restarted named consumer reads again only what it left unsettled", () => {
  it("a held message does not bring back the messages settled after it", async () => {
    const path = join(dir, "held.ss");
    const connected = await real(path);
    await firstLife(connected, "held", "held");
    // Stored: resume after m4, with m1 still open before it.
    expect(JSON.parse(readFileSync(sidecarPath(path, "svc", "held"), "utf8"))).toEqual({
      version: 2,
      stream: "held",
      next: "5",
      open: ["1"],
    });
    expect(await readAll(connected, "held")).toEqual(["m1", "end"]);
    await connected.shutdown();
    expect(
      await both("held both", async (c, key) => {
        await firstLife(c, key, "held");
        return readAll(c, key);
      }),
    ).toEqual(["m1", "end"]);
  });

  it("a message whose dead letter is in the file is not delivered again, so not dead-lettered twice", async () => {
    const seen = await both("dead letter", async (c, key) => {
      await firstLife(c, key, "dead letter");
      const again = await readAll(c, key);
      // The dead letter itself, once, marked with the message it was written for.
      const dlq = await c.subscribe(
        new FileStream(`${key}.dlq`, { start: "beginning", replay: true }),
      );
      const dead = await take(dlq);
      await dlq.close();
      return [
        ...again,
        `dlq: ${text(dead.payload)} from ${dead.headers.getString(COPY_OF_HEADER)}`,
      ];
    });
    expect(seen).toEqual(["end", "dlq: m2 from svc dead-letter 2"]);
  });

  it("a message whose retry copy is in the file is not delivered again; its copy is", async () => {
    const seen = await both("retry", (c, key) => {
      return firstLife(c, key, "retry").then(() => readAll(c, key));
    });
    // The copy of m2 (appended after m4) comes once, and m2 itself not at all.
    expect(seen).toEqual(["m2", "end"]);
  });

  it("a reply is no copy: its message, unsettled, is delivered again", async () => {
    expect(
      await both("reply", (c, key) => firstLife(c, key, "reply").then(() => readAll(c, key))),
    ).toEqual(["m2", "end"]);
  });

  it("another consumer's copy, or a copy mark carried onto a plain publish, counts for nothing", async () => {
    const seen = await both("others", async (c, key) => {
      // svc leaves m2 unsettled, with no copy of it.
      await firstLife(c, key, "reply");
      const publisher = await c.defaultPublishPolicy().pair(c);
      // Consumer "other" dead-letters its own m2.
      const other = await c.subscribe(stream(key, "other"));
      await (await take(other)).ack();
      await publisher.publish(copyOf(await take(other), "dead letter"));
      await other.close();
      // A handler forwarding headers that name svc's m2 as copied writes no copy mark.
      const forged = new HeaderMap().set(COPY_OF_HEADER, `svc ${key} 2`);
      await publisher.publish({ name: key, payload: utf8("forwarded"), headers: forged });
      const again = await readAll(c, key);
      const marks = (await readAll(c, `${key}.dlq`, "reader")).length;
      return [...again, `dead letters ${marks - 1}`];
    });
    expect(seen).toEqual(["m2", "forwarded", "end", "dead letters 1"]);
  });
});
