// One client's state as its link counts it (client/watchedClient.ts), and which kafkajs errors
// are its connection failing: no cluster needed, the probe is the test's.
import { LinkStates } from "@ruststream/core/broker";
import { describe, expect, it } from "vitest";
import { connectionFailure } from "../src/client/kafkajs/errors.js";
import { WatchedClient } from "../src/client/watchedClient.js";

function following() {
  const states = new LinkStates();
  const heard: string[] = [];
  states.follow((change) =>
    heard.push(`${change.state}${change.reason === undefined ? "" : `: ${change.reason}`}`),
  );
  return { states, heard };
}

/** A probe the test answers: each question waits until the test says how it ends. */
function probe() {
  const asked: Array<{ answer: () => void; fail: () => void }> = [];
  return {
    asked,
    ask: () =>
      new Promise<void>((resolve, reject) => {
        asked.push({ answer: resolve, fail: () => reject(new Error("still away")) });
      }),
    async next(): Promise<{ answer: () => void; fail: () => void }> {
      const deadline = Date.now() + 5000;
      const count = asked.length;
      while (asked.length === count) {
        if (Date.now() > deadline) throw new Error("the probe was not asked again");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return asked.at(-1)!;
    },
  };
}

describe("WatchedClient", () => {
  it("down until the probe answers, asking again after each failure", async () => {
    const { states, heard } = following();
    const cluster = probe();
    const client = new WatchedClient(states, cluster.ask);
    client.down("all broker connections are down");
    client.down("all broker connections are down, again");
    (await cluster.next()).fail();
    (await cluster.next()).answer();
    const deadline = Date.now() + 5000;
    while (heard.length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(heard).toEqual(["reconnecting: all broker connections are down", "connected"]);
    expect(cluster.asked).toHaveLength(2);
  });

  it("a refused login is lost until the client is let in; a fatal error is lost for good", () => {
    const { states, heard } = following();
    const client = new WatchedClient(states);
    client.refused("SASL authentication failed");
    client.down("all broker connections are down"); // still refused: it stays lost
    client.back();
    client.failed("a fatal error");
    client.back();
    client.down("all broker connections are down");
    expect(heard).toEqual(["lost: SASL authentication failed", "connected", "lost: a fatal error"]);
  });

  it("a client closed on purpose counts no more, and its probe stops", async () => {
    const { states, heard } = following();
    const cluster = probe();
    const client = new WatchedClient(states, cluster.ask);
    client.down("gone");
    const question = await cluster.next();
    client.close();
    question.fail();
    client.down("gone again");
    expect(heard).toEqual(["reconnecting: gone", "connected"]);
    expect(cluster.asked).toHaveLength(1);
  });
});

describe("kafkajs: a request failing on its connection", () => {
  const named = (name: string, message: string, cause?: Error) =>
    Object.assign(new Error(message, cause === undefined ? {} : { cause }), { name });

  it("is told from one failing on what it carries", () => {
    expect(connectionFailure(named("KafkaJSConnectionError", "connect ECONNREFUSED"))).toBe(true);
    expect(
      connectionFailure(
        named(
          "KafkaJSNumberOfRetriesExceeded",
          "retries exceeded",
          named("KafkaJSConnectionClosedError", "Closed connection"),
        ),
      ),
    ).toBe(true);
    expect(
      connectionFailure(
        named("KafkaJSNonRetriableError", "Connection error: connect ECONNREFUSED"),
      ),
    ).toBe(true);
    expect(
      connectionFailure(
        named(
          "KafkaJSProtocolError",
          "The request included a message larger than the max message size the server will accept",
        ),
      ),
    ).toBe(false);
    expect(connectionFailure("not an error")).toBe(false);
  });
});
