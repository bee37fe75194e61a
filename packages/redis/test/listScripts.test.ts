import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConnection } from "../src/client/connectionOptions.js";
import { IoredisLink } from "../src/client/ioredisLink.js";
import type { Link } from "../src/client/link.js";
import { errorCode, type Reply, text } from "../src/client/resp.js";
import { MemoryRedis } from "../src/inProcess/memoryRedis.js";
import { recoverScript, settleScript, takeScript } from "../src/list/listScripts.js";

// A reliable list's scripts, run on the server and on the in-process stand-in: the same replies,
// the same errors and the same keys afterwards, and what each must do on both.

let server: IoredisLink;
beforeAll(async () => {
  server = await IoredisLink.connect(resolveConnection({ url: requireEnv("REDIS_URL") }));
});
afterAll(() => server.close());

const pid = Buffer.from([0, 0, 0, 7]);

function member(counter: number, value: string): Buffer {
  const salt = Buffer.alloc(12);
  pid.copy(salt);
  salt.writeBigUInt64BE(BigInt(counter), 4);
  return Buffer.concat([salt, Buffer.from(value)]);
}

const show = (reply: Reply): unknown =>
  Array.isArray(reply) ? reply.map(show) : Buffer.isBuffer(reply) ? text(reply) : reply;

/** What a step replied, or the code of the error it threw. */
async function step(run: () => Promise<Reply>): Promise<unknown> {
  try {
    return show(await run());
  } catch (error) {
    return `error ${errorCode(error)}`;
  }
}

/** Runs the scripts' whole life on `link`, and answers what each step replied or threw. */
async function transcript(link: Link): Promise<Record<string, unknown>> {
  const key = uniqueName("scripts");
  const [queue, processing, recovery] = [key, `${key}.processing`, `${key}.recovery`];
  const keys = [queue, processing, recovery];
  const state = async (): Promise<unknown> => ({
    queue: await link.call("LLEN", [queue]),
    processing: await link.call("LLEN", [processing]),
    claims: show(await link.call("ZRANGEBYSCORE", [recovery, "-inf", "+inf"])),
  });
  const out: Record<string, unknown> = {};
  await link.call("LPUSH", [queue, "a", "b", "c", "d"]);
  out.takeTwoClaimed = await step(() => link.script(takeScript, keys, [2, 1000, pid, 1]));
  out.afterTakeTwo = await state();
  out.takeRestUnclaimed = await step(() => link.script(takeScript, keys, [5]));
  out.takeFromEmpty = await step(() => link.script(takeScript, keys, [3, 1000, pid, 3]));
  out.afterTakes = await state();
  const recoverA = [member(1, "a"), "a", "a+1"];
  out.recover = await step(() => link.script(recoverScript, keys, recoverA));
  out.afterRecover = await state();
  out.recoverAgain = await step(() => link.script(recoverScript, keys, recoverA));
  // Keys of the wrong type are refused before anything moves.
  const wrong = `${key}.wrong`;
  await link.call("LPUSH", [wrong, "x"]);
  out.takeIntoWrongRecovery = await step(() =>
    link.script(takeScript, [queue, processing, wrong], [1, 1000, pid, 9]),
  );
  out.recoverOntoWrongQueue = await step(() =>
    link.script(recoverScript, [recovery, processing, recovery], [member(2, "b"), "b", "b+1"]),
  );
  out.afterWrongKeys = await state();
  return out;
}

/** A dead letter's write with its value's release, on `link`: what each step replied or threw. */
async function forwardTranscript(link: Link): Promise<Record<string, unknown>> {
  const key = uniqueName("forward");
  const [queue, processing, recovery, dead] = [
    key,
    `${key}.processing`,
    `${key}.recovery`,
    `${key}.dlq`,
  ];
  const forward = (value: string, claim: Buffer | "", target = dead) =>
    step(() =>
      link.script(
        settleScript,
        [processing, recovery, target],
        [value, claim, "LPUSH", `${value}!`],
      ),
    );
  const state = async (): Promise<unknown> => ({
    processing: show(await link.call("LRANGE", [processing, 0, -1])),
    claims: show(await link.call("ZRANGEBYSCORE", [recovery, "-inf", "+inf"])),
    dead: show(await link.call("LRANGE", [dead, 0, -1])),
  });
  const out: Record<string, unknown> = {};
  await link.call("LPUSH", [queue, "a", "b", "c"]);
  await link.script(takeScript, [queue, processing, recovery], [2, 1000, pid, 1]);
  await link.script(takeScript, [queue, processing, recovery], [1]);
  out.held = await state();
  out.forwardClaimed = await forward("a", member(1, "a"));
  out.afterForward = await state();
  // The reply was lost and the runtime publishes again: the value is gone, nothing is written.
  out.forwardAgain = await forward("a", member(1, "a"));
  // The claim went (a sweeper gave the value back, its holder taken for dead): nothing is written.
  out.forwardWithoutItsClaim = await forward("b", member(9, "b"));
  out.forwardOntoWrongType = await forward("c", "", recovery);
  out.afterRefused = await state();
  out.forwardUnclaimed = await forward("c", "");
  out.afterAll = await state();
  return out;
}

describe("reliable list scripts", () => {
  it("take and recover answer and leave the same on the server and in-process", async () => {
    const onServer = await transcript(server);
    const inProcess = await transcript(new MemoryRedis(undefined).link());
    expect(inProcess).toEqual(onServer);
    expect(onServer).toEqual({
      // First taken first: the queue's right end is the oldest push.
      takeTwoClaimed: ["a", "b"],
      afterTakeTwo: {
        queue: 2,
        processing: 2,
        claims: [member(1, "a").toString(), member(2, "b").toString()],
      },
      takeRestUnclaimed: ["c", "d"],
      takeFromEmpty: [],
      afterTakes: {
        queue: 0,
        processing: 4,
        claims: [member(1, "a").toString(), member(2, "b").toString()],
      },
      recover: 1,
      afterRecover: { queue: 1, processing: 3, claims: [member(2, "b").toString()] },
      // Another sweeper got there first: nothing pushed twice.
      recoverAgain: 0,
      takeIntoWrongRecovery: "error WRONGTYPE",
      recoverOntoWrongQueue: "error WRONGTYPE",
      afterWrongKeys: { queue: 1, processing: 3, claims: [member(2, "b").toString()] },
    });
  });

  it("forward writes the copy and releases the value once, only while it is held, alike on both", async () => {
    const onServer = await forwardTranscript(server);
    const inProcess = await forwardTranscript(new MemoryRedis(undefined).link());
    expect(inProcess).toEqual(onServer);
    const [a, b] = [member(1, "a").toString(), member(2, "b").toString()];
    expect(onServer).toEqual({
      held: { processing: ["c", "b", "a"], claims: [a, b], dead: [] },
      forwardClaimed: 1,
      afterForward: { processing: ["c", "b"], claims: [b], dead: ["a!"] },
      forwardAgain: null,
      forwardWithoutItsClaim: null,
      forwardOntoWrongType: "error WRONGTYPE",
      afterRefused: { processing: ["c", "b"], claims: [b], dead: ["a!"] },
      forwardUnclaimed: 2,
      afterAll: { processing: ["b"], claims: [b], dead: ["c!", "a!"] },
    });
  });

  it("refuses a call with the wrong number of keys, on both", async () => {
    for (const link of [server, new MemoryRedis(undefined).link()]) {
      await expect(link.script(takeScript, ["only"], [1])).rejects.toThrow(
        /ruststreamListTake takes 3 keys, not 1/,
      );
    }
  });
});
