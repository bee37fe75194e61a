// What a handler returns and how it fails, as Nest's own transports treat it, on the file broker:
// an Observable is streamed back to a send (each value, then completion or its error), a Promise
// answers with what it resolves to, nothing answers null, an emit to a
// message pattern is served as an event, an erroring Observable is a failed attempt, and one of
// the runtime's outcomes is applied as returned. Options the strategy cannot read are refused.
import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Controller, type INestMicroservice, Inject, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { Ctx, EventPattern, MessagePattern, Payload, RpcException } from "@nestjs/microservices";
import {
  deadLetter,
  isRustStreamError,
  type RunningApp,
  readDeadLetterOrigin,
} from "@ruststream/core";
import { FileBroker } from "@ruststream/file";
import { within } from "@ruststream/tooling-testkit";
import { concat, EMPTY, from, lastValueFrom, of, throwError, toArray } from "rxjs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  ClientRustStream,
  type RustStreamContext,
  RustStreamRecord,
  RustStreamServer,
} from "../src/index.js";
import { Seen } from "./seen.js";

const dir = mkdtempSync(join(tmpdir(), "rs-nestjs-behaviour-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

@Controller()
class BehaviourController {
  readonly #seen: Seen;

  constructor(@Inject(Seen) seen: Seen) {
    this.#seen = seen;
  }

  @MessagePattern("stream")
  stream(@Payload() n: number) {
    return from([n, n * 2, n * 3]);
  }

  @MessagePattern("stream-failing")
  streamFailing(@Payload() n: number) {
    return concat(
      of(n),
      throwError(() => new RpcException(`broke after ${n}`)),
    );
  }

  @MessagePattern("declined-request", { ruststream: { deadLetter: "given-up" } })
  declinedRequest(@Payload() _: unknown, @Ctx() ctx: RustStreamContext) {
    this.#seen.saw("declined-request", ctx);
    return of(deadLetter("not for this service"));
  }

  @MessagePattern("empty")
  empty() {
    return EMPTY;
  }

  @MessagePattern("keyed")
  keyed(@Payload() data: unknown, @Ctx() ctx: RustStreamContext) {
    this.#seen.saw("keyed", ctx);
    return { data, key: ctx.getKey(), tenant: ctx.getHeaders().getString("x-tenant") };
  }

  @MessagePattern("promised")
  async promised(@Payload() text: string): Promise<string> {
    return text.toUpperCase();
  }

  @MessagePattern("nothing")
  nothing(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): void {
    this.#seen.saw("nothing", ctx);
  }

  @EventPattern<string>("erroring", {
    ruststream: { maxAttempts: 2, deadLetter: "given-up" },
  })
  erroring(@Payload() _: unknown, @Ctx() ctx: RustStreamContext) {
    this.#seen.saw("erroring", ctx);
    return throwError(() => new Error("the stream failed"));
  }

  @EventPattern<string>("refused", { ruststream: { deadLetter: "given-up" } })
  refused(@Payload() _: unknown, @Ctx() ctx: RustStreamContext) {
    this.#seen.saw("refused", ctx);
    return deadLetter("not for this service");
  }

  // The dead-lettered copy is this pattern's first attempt, under the default cap.
  @EventPattern<string>("given-up")
  givenUp(@Payload() _: unknown, @Ctx() ctx: RustStreamContext) {
    const origin = readDeadLetterOrigin(ctx.getHeaders());
    this.#seen.saw(`given-up from ${origin?.source}: ${origin?.reason}`, ctx);
  }

  @EventPattern<string>("observed")
  observed(@Payload() _: unknown, @Ctx() ctx: RustStreamContext) {
    this.#seen.saw("observed", ctx);
    return of(undefined);
  }
}

@Module({ controllers: [BehaviourController], providers: [Seen] })
class BehaviourModule {}

describe("what a Nest handler returns, on the RustStream transport", () => {
  let running: { app: INestMicroservice; client: ClientRustStream } | undefined;

  afterEach(async () => {
    const current = running;
    running = undefined;
    await current?.client.close();
    await current?.app.close();
  });

  async function start(): Promise<{ seen: Seen; client: ClientRustStream }> {
    const path = join(dir, `behaviour-${++files}.ss`);
    const app = await NestFactory.createMicroservice(BehaviourModule, {
      strategy: new RustStreamServer({
        broker: new FileBroker({ path, consumer: "behaviour" }),
        name: "behaviour",
        defaults: { failure: { backoff: { initialMs: 10, maxMs: 50 } } },
      }),
      logger: false,
    });
    await app.listen();
    const client = new ClientRustStream({ broker: new FileBroker({ path }), timeoutMs: 20_000 });
    running = { app, client };
    return { seen: app.get(Seen), client };
  }

  it("an Observable is streamed back to send, each value, then completion; a Promise answers with what it resolves to", async () => {
    const { client } = await start();
    await expect(lastValueFrom(client.send("stream", 2).pipe(toArray()))).resolves.toEqual([
      2, 4, 6,
    ]);
    await expect(lastValueFrom(client.send("promised", "ok").pipe(toArray()))).resolves.toEqual([
      "OK",
    ]);
  });

  it("a streamed Observable that errors sends its values, then the error; one that sends none completes empty", async () => {
    const { client } = await start();
    const values: unknown[] = [];
    const error = await new Promise<unknown>((resolve, reject) => {
      client.send("stream-failing", 5).subscribe({
        next: (value) => values.push(value),
        error: resolve,
        complete: () => reject(new Error("completed instead of failing")),
      });
    });
    expect(values).toEqual([5]);
    expect(error).toEqual({ status: "error", message: "broke after 5" });
    // As on Nest's transports: no value at all, so lastValueFrom needs its default.
    await expect(lastValueFrom(client.send("empty", 1), { defaultValue: "none" })).resolves.toBe(
      "none",
    );
  });

  it("a requester that takes one reply (the RustStream app's request) gets the Observable's last value", async () => {
    const { client } = await start();
    await client.connect();
    const running = client.unwrap<RunningApp>();
    await expect(running.request("stream", 3, { timeoutMs: 20_000 })).resolves.toBe(9);
  });

  it("a message handler that returns nothing answers null; emitted to, it runs as an event", async () => {
    const { seen, client } = await start();
    await expect(lastValueFrom(client.send("nothing", 1))).resolves.toBeNull();
    await lastValueFrom(client.emit("nothing", 2), { defaultValue: undefined });
    await within(
      20_000,
      "the emitted message handled",
      seen.until(() => seen.of("nothing").length === 2),
    );
    expect(seen.of("nothing")).toEqual([1, 1]);
  });

  it("an Observable that errors is a failed attempt, until maxAttempts from the pattern's extras", async () => {
    const { seen, client } = await start();
    await lastValueFrom(client.emit("erroring", {}), { defaultValue: undefined });
    const given = "given-up from erroring: max-attempts";
    await within(
      20_000,
      "the dead letter",
      seen.until(() => seen.of(given).length === 1),
    );
    expect(seen.of("erroring")).toEqual([1, 2]);
    // The dead letter's handler counts its own attempts: the copy is its first.
    expect(seen.of(given)).toEqual([1]);
  });

  it("a runtime outcome returned by a handler is applied: deadLetter(reason) at the first attempt", async () => {
    const { seen, client } = await start();
    await lastValueFrom(client.emit("refused", {}), { defaultValue: undefined });
    const given = "given-up from refused: not for this service";
    await within(
      20_000,
      "the dead letter",
      seen.until(() => seen.of(given).length === 1),
    );
    expect(seen.of("refused")).toEqual([1]);
  });

  it("an outcome in a streamed Observable is applied, not sent to the caller as a value", async () => {
    const { seen, client } = await start();
    const values: unknown[] = [];
    const asking = client.send("declined-request", {}).subscribe({ next: (v) => values.push(v) });
    const given = "given-up from declined-request: not for this service";
    await within(
      20_000,
      "the dead letter",
      seen.until(() => seen.of(given).length === 1),
    );
    asking.unsubscribe();
    // Sent as a value, the outcome would have been acked with the reply, never dead-lettered.
    expect(seen.of("declined-request")).toEqual([1]);
    expect(values).toEqual([]);
  });

  it("a RustStreamRecord's data reaches the handler, published with its partition key and headers", async () => {
    const { seen, client } = await start();
    const asked = new RustStreamRecord(
      { id: 7 },
      {
        partitionKey: "order-7",
        headers: { "x-tenant": "globex" },
      },
    );
    await expect(lastValueFrom(client.send("keyed", asked))).resolves.toEqual({
      data: { id: 7 },
      key: "order-7",
      tenant: "globex",
    });
    await lastValueFrom(
      client.emit("keyed", new RustStreamRecord("plain", { partitionKey: "k2" })),
      {
        defaultValue: undefined,
      },
    );
    await within(
      20_000,
      "the emitted record handled",
      seen.until(() => seen.of("keyed").length === 2),
    );
    expect(seen.calls.filter((c) => c.pattern === "keyed")).toEqual([
      { pattern: "keyed", attempt: 1, tenant: "globex", key: "order-7" },
      { pattern: "keyed", attempt: 1, key: "k2" },
    ]);
    // The broker's own options go to its publish: the stream file takes none, and says so.
    const refused = await lastValueFrom(
      client.emit("keyed", new RustStreamRecord(1, { options: { priority: 3 } })),
      { defaultValue: undefined },
    ).catch((error: unknown) => error);
    expect(String(refused)).toMatch(/no per-message publish options/);
  });

  // NestJS 11's ClientProxy has no dispatch hook (NestJS 12 added it), so there no packet carries
  // metadata; tooling/nestjs11 runs this file on 11.
  const dispatchHook = "setOnDispatchHook" in ClientRustStream.prototype;
  it.runIf(dispatchHook)(
    "the client's packet metadata reaches the handler as headers (NestJS 12: 11 has no dispatch hook)",
    async () => {
      const { seen, client } = await start();
      client.setOnDispatchHook((packet) => {
        packet.metadata = { "x-tenant": "acme" };
      });
      await lastValueFrom(client.emit("observed", {}), { defaultValue: undefined });
      await within(
        20_000,
        "the observed event handled",
        seen.until(() => seen.of("observed").length === 1),
      );
      expect(seen.calls).toEqual([{ pattern: "observed", attempt: 1, tenant: "acme" }]);
    },
  );
});

describe("the strategy's state", () => {
  it("status follows the broker's connection, and unwrap() is the running app", async () => {
    const path = join(dir, `state-${++files}.ss`);
    const server = new RustStreamServer({
      broker: new FileBroker({ path, consumer: "state" }),
      name: "state",
    });
    const states: string[] = [];
    const watching = server.status.subscribe((state) => states.push(state));
    const app = await NestFactory.createMicroservice(BehaviourModule, {
      strategy: server,
      logger: false,
    });
    await app.listen();
    const running = server.unwrap<RunningApp>();
    expect(running.state).toBe("ready");
    expect([...running.subscribers].sort()).toEqual(
      [
        "empty",
        "erroring",
        "given-up",
        "keyed",
        "nothing",
        "observed",
        "promised",
        "refused",
        "declined-request",
        "stream",
        "stream-failing",
      ].sort(),
    );
    await app.close();
    watching.unsubscribe();
    expect(running.state).toBe("stopped");
    expect(states).toEqual(["connected", "closed"]);
    expect(() => server.unwrap()).toThrow(/after app.listen\(\)/);
  });
});

describe("what the strategy refuses", () => {
  it("an option it does not know, in a pattern's extras, fails listen() naming it", async () => {
    @Controller()
    class Misspelt {
      @EventPattern<string>("orders", { ruststream: { maxAttempt: 5 } })
      handle(): void {}
    }
    @Module({ controllers: [Misspelt] })
    class MisspeltModule {}
    const app = await NestFactory.createMicroservice(MisspeltModule, {
      strategy: new RustStreamServer({
        broker: new FileBroker({ path: join(dir, `misspelt-${++files}.ss`) }),
        name: "misspelt",
      }),
      logger: false,
    });
    const refused = await app.listen().catch((error: unknown) => error);
    await app.close();
    expect(isRustStreamError(refused, "invalid-argument")).toBe(true);
    expect(String(refused)).toContain('unknown option "maxAttempt"');
  });

  it("a strategy or a client without a broker, and defaults it cannot read, are refused when made", () => {
    const broker = new FileBroker({ path: join(dir, "unused.ss") });
    const made = [
      () => new RustStreamServer({ name: "x" } as never),
      () => new RustStreamServer({ broker, name: "" }),
      () => new RustStreamServer({ broker, name: "x", defaults: { deadletter: "d" } as never }),
      () => new ClientRustStream({} as never),
      () => new ClientRustStream({ broker, timeoutMs: 0 }),
    ].map((make) => {
      try {
        make();
        return "made";
      } catch (error) {
        return isRustStreamError(error, "invalid-argument") ? "invalid-argument" : String(error);
      }
    });
    expect(made).toEqual(Array(5).fill("invalid-argument"));
  });
});
