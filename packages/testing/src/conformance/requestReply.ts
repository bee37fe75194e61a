import {
  type Delivery,
  HeaderMap,
  headerNames,
  isRustStreamError,
  type Publisher,
  type Requester,
  supportsRequest,
} from "@ruststream/core";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { uniqueName } from "../helpers/uniqueName.js";
import { within } from "../helpers/within.js";
import {
  type AnyConnected,
  type BrokerFactories,
  type Harness,
  harnessOf,
  withConnection,
} from "./harness.js";
import { awaitedLater, Collector, elsewhere } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

export interface RequestReplyFactories<TConnected extends AnyConnected>
  extends BrokerFactories<TConnected> {
  /** The requester; by default the publisher, when it supports requests. */
  readonly makeRequester?: (connected: TConnected) => Promise<Requester>;
  /** The timeout the unanswered-request checks use (default 300 ms). */
  readonly timeoutMs?: number;
}

interface RequestContext {
  readonly h: Harness;
  readonly requester: (connected: AnyConnected) => Promise<Requester>;
  readonly timeoutMs: number;
}

/** Answers a request the way a handler does: to its `reply-to`, with its `correlation-id`. */
async function answer(publisher: Publisher<never>, request: Delivery, body: string, more = false) {
  const replyTo = request.headers.getString(headerNames.replyTo);
  const correlation = request.headers.get(headerNames.correlationId);
  if (replyTo === undefined || correlation === undefined) {
    throw new Error("a request arrived without reply-to or correlation-id");
  }
  const headers = new HeaderMap().set(headerNames.correlationId, correlation);
  if (more) headers.set(headerNames.moreReplies, "1");
  await publisher.publish({ name: replyTo, payload: bytes(body), headers });
}

async function responder(h: Harness, connected: AnyConnected) {
  const name = uniqueName("ask");
  const requests = new Collector(await connected.subscribe(h.source(name)));
  // Replies go out as the runtime sends them: through the broker's default policy, whatever
  // publisher carried the request.
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  return { name, requests, publisher };
}

export const requestReplyScenarios: readonly Scenario<RequestContext>[] = [
  {
    name: "a request carries a usable reply-to and gets its correlated reply",
    needs: ["request"],
    run: ({ h, requester }) =>
      withConnection(h, async (connected) => {
        const { name, requests, publisher } = await responder(h, connected);
        const client = await requester(connected);
        const reply = awaitedLater(
          client.request({ name, payload: bytes("ping") }, { timeoutMs: h.arrivalMs }),
        );
        const [request] = await requests.waitFor(1, h.arrivalMs, "the request");
        await request!.ack();
        await answer(publisher, request!, `pong:${text(request!.payload)}`);
        expect(text((await reply).payload)).toBe("pong:ping");
        await requests.stop();
      }),
  },
  {
    name: "requests from another task, then from this one, both resolve",
    needs: ["request"],
    run: ({ h, requester }) =>
      withConnection(h, async (connected) => {
        const { name, requests, publisher } = await responder(h, connected);
        const client = await requester(connected);
        const options = { timeoutMs: h.arrivalMs };
        const first = awaitedLater(
          elsewhere(() => client.request({ name, payload: bytes("1") }, options)),
        );
        const [r1] = await requests.waitFor(1, h.arrivalMs, "first request");
        await r1!.ack();
        await elsewhere(() => answer(publisher, r1!, "one"));
        expect(text((await first).payload)).toBe("one");
        const second = awaitedLater(client.request({ name, payload: bytes("2") }, options));
        const got = await requests.waitFor(2, h.arrivalMs, "second request");
        await got[1]!.ack();
        await answer(publisher, got[1]!, "two");
        expect(text((await second).payload)).toBe("two");
        await requests.stop();
      }),
  },
  {
    name: "an unanswered request fails after its timeout, and its late reply resolves nothing else",
    needs: ["request"],
    run: ({ h, requester, timeoutMs }) =>
      withConnection(h, async (connected) => {
        const { name, requests, publisher } = await responder(h, connected);
        const client = await requester(connected);
        const started = performance.now();
        const late = awaitedLater(client.request({ name, payload: bytes("late") }, { timeoutMs }));
        const [r1] = await requests.waitFor(1, h.arrivalMs, "the late request");
        await r1!.ack();
        let error: unknown;
        try {
          await late;
        } catch (e) {
          error = e;
        }
        expect(isRustStreamError(error, "timeout"), String(error)).toBe(true);
        expect(performance.now() - started).toBeGreaterThanOrEqual(timeoutMs - 2);
        const next = awaitedLater(
          client.request({ name, payload: bytes("next") }, { timeoutMs: h.arrivalMs }),
        );
        const got = await requests.waitFor(2, h.arrivalMs, "the next request");
        await got[1]!.ack();
        await answer(publisher, r1!, "stale");
        await answer(publisher, got[1]!, "fresh");
        expect(text((await next).payload)).toBe("fresh");
        await requests.stop();
      }),
  },
  {
    name: "two concurrent requests answered in reverse order each get their own reply",
    needs: ["request"],
    run: ({ h, requester }) =>
      withConnection(h, async (connected) => {
        const { name, requests, publisher } = await responder(h, connected);
        const client = await requester(connected);
        const options = { timeoutMs: h.arrivalMs };
        const a = awaitedLater(client.request({ name, payload: bytes("a") }, options));
        const b = awaitedLater(client.request({ name, payload: bytes("b") }, options));
        const got = await requests.waitFor(2, h.arrivalMs, "both requests");
        for (const r of got) await r.ack();
        for (const r of [...got].reverse()) await answer(publisher, r, `re:${text(r.payload)}`);
        expect(text((await a).payload)).toBe("re:a");
        expect(text((await b).payload)).toBe("re:b");
        await requests.stop();
      }),
  },
  {
    name: "a request that takes several replies gets each one before the last, in order, then resolves with the last",
    needs: ["request"],
    run: ({ h, requester }) =>
      withConnection(h, async (connected) => {
        const { name, requests, publisher } = await responder(h, connected);
        const client = await requester(connected);
        const partials: string[] = [];
        const reply = awaitedLater(
          client.request(
            { name, payload: bytes("stream") },
            { timeoutMs: h.arrivalMs, onPartial: (r) => partials.push(text(r.payload)) },
          ),
        );
        const [request] = await requests.waitFor(1, h.arrivalMs, "the request");
        await request!.ack();
        expect(request!.headers.getString(headerNames.replyStream)).toBe("1");
        await answer(publisher, request!, "one", true);
        await answer(publisher, request!, "two", true);
        await answer(publisher, request!, "end");
        expect(text((await reply).payload)).toBe("end");
        expect(partials).toEqual(["one", "two"]);
        await requests.stop();
      }),
  },
  {
    name: "a request after shutdown fails promptly",
    needs: ["request"],
    run: async ({ h, requester }) => {
      const connected = await h.connect();
      const client = await requester(connected);
      await connected.shutdown();
      let error: unknown;
      try {
        await within(
          5000,
          "request after shutdown",
          client.request({ name: uniqueName("gone"), payload: bytes("x") }, { timeoutMs: 60_000 }),
        );
      } catch (e) {
        error = e;
      }
      expect(isRustStreamError(error, "closed"), String(error)).toBe(true);
    },
  },
];

/**
 * Registers the request/reply suite: correlation, other tasks, timeouts, order, several replies to
 * one request, and shutdown.
 */
export function requestReply<TConnected extends AnyConnected>(
  factories: RequestReplyFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  const make = factories.makeRequester as ((c: AnyConnected) => Promise<Requester>) | undefined;
  const requester = async (connected: AnyConnected): Promise<Requester> => {
    if (make !== undefined) return make(connected);
    const publisher = await h.publisher(connected);
    if (!supportsRequest(publisher)) {
      throw new Error("the publisher cannot send requests: give makeRequester");
    }
    return publisher;
  };
  registerSuite(
    "request/reply",
    requestReplyScenarios,
    { h, requester, timeoutMs: factories.timeoutMs ?? 300 },
    h.capabilities,
    h.arrivalMs * 6,
  );
}
