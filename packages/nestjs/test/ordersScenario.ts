// The documented service on one broker, through Nest as its users run it: the microservice made by
// `NestFactory.createMicroservice` with our strategy, and a `ClientRustStream` for the callers.
import "reflect-metadata";
import type { INestApplicationContext } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { Broker } from "@ruststream/core";
import { within } from "@ruststream/tooling-testkit";
import { lastValueFrom } from "rxjs";
import { afterEach, expect, it } from "vitest";
import {
  ClientRustStream,
  type PatternOptions,
  RustStreamModule,
  RustStreamServer,
} from "../src/index.js";
import { OrdersService, ordersHandlersModule, ordersModule, type Topics } from "./ordersApp.js";

export interface Setup {
  readonly topics: Topics;
  /** A broker for the microservice, and one for the client (configured alike). */
  readonly server: Broker;
  readonly client: Broker;
}

/** Short backoffs for every pattern, so the declined order's attempts come quickly. */
const defaults: PatternOptions = { failure: { backoff: { initialMs: 10, maxMs: 50 } } };

/**
 * The service's handlers where a migration has them: on the transport strategy (controllers with
 * patterns, `createMicroservice`), or on `RustStreamModule` (a provider with `@Subscriber`, in an
 * application context that starts the app on bootstrap).
 */
export type Host = "strategy" | "module";

async function startService(
  host: Host,
  topics: Topics,
  broker: Broker,
): Promise<INestApplicationContext> {
  if (host === "module") {
    const rustStream = RustStreamModule.forRoot({ broker, name: "orders", defaults });
    return NestFactory.createApplicationContext(ordersHandlersModule(topics, rustStream), {
      logger: false,
    });
  }
  const app = await NestFactory.createMicroservice(ordersModule(topics), {
    strategy: new RustStreamServer({ broker, name: "orders", defaults }),
    logger: false,
  });
  await app.listen();
  return app;
}

export function documentedServiceTests(setup: () => Setup, host: Host = "strategy"): void {
  let running: { app: INestApplicationContext; client: ClientRustStream } | undefined;

  afterEach(async () => {
    const current = running;
    running = undefined;
    await current?.client.close();
    await current?.app.close();
  });

  async function start(): Promise<{
    topics: Topics;
    orders: OrdersService;
    client: ClientRustStream;
  }> {
    const { topics, server, client: clientBroker } = setup();
    const app = await startService(host, topics, server);
    const client = new ClientRustStream({ broker: clientBroker, timeoutMs: 20_000 });
    running = { app, client };
    return { topics, orders: app.get(OrdersService), client };
  }

  it("an @EventPattern handler gets what the client emits, with its topic and attempt", async () => {
    const { topics, orders, client } = await start();
    await lastValueFrom(client.emit(topics.created, { id: 1, sku: "apple" }), {
      defaultValue: undefined,
    });
    await lastValueFrom(client.emit(topics.created, { id: 2, sku: "pear" }), {
      defaultValue: undefined,
    });
    await within(
      20_000,
      "both orders handled",
      orders.until(() => orders.handled.length === 2),
    );
    expect(orders.handled).toEqual([
      { order: { id: 1, sku: "apple" }, topic: topics.created, attempt: 1, key: undefined },
      { order: { id: 2, sku: "pear" }, topic: topics.created, attempt: 1, key: undefined },
    ]);
  });

  it("a @MessagePattern handler answers the client's send, through the provider", async () => {
    const { topics, client } = await start();
    await expect(lastValueFrom(client.send<number>(topics.sum, [1, 2, 3, 4]))).resolves.toBe(10);
    await expect(lastValueFrom(client.send<number>(topics.sum, [5]))).resolves.toBe(5);
  });

  it("a replying handler's Observable is streamed back to send: each value as it comes, then completion", async () => {
    const { topics, orders, client } = await start();
    const statuses: string[] = [];
    const completed = new Promise<void>((resolve, reject) => {
      client.send<string>(topics.track, 7).subscribe({
        next: (status) => {
          statuses.push(status);
          // The stream's next status waits for this: sent only once the first one came back.
          if (statuses.length === 1) orders.shipped.next("order 7 shipped");
        },
        error: reject,
        complete: resolve,
      });
    });
    await within(20_000, "the tracking stream completed", completed);
    expect(statuses).toEqual(["order 7 packed", "order 7 shipped", "order 7 delivered"]);
  });

  it("a streamed Observable that fails midway sends its values, then errors send with Nest's error packet", async () => {
    const { topics, client } = await start();
    const statuses: string[] = [];
    const failed = new Promise<unknown>((resolve, reject) => {
      client.send<string>(topics.lost, 9).subscribe({
        next: (status) => statuses.push(status),
        error: resolve,
        complete: () => reject(new Error("the stream completed instead of failing")),
      });
    });
    const error = await within(20_000, "the tracking stream failed", failed);
    expect(statuses).toEqual(["order 9 packed", "order 9 shipped"]);
    expect(error).toEqual({ status: "error", message: "order 9 lost in transit" });
  });

  it("an event whose handler throws gets its three attempts, then lands in the dead letter with its origin", async () => {
    const { topics, orders, client } = await start();
    await lastValueFrom(client.emit(topics.declined, { id: 7, sku: "plum" }), {
      defaultValue: undefined,
    });
    await within(
      20_000,
      "the declined order dead-lettered",
      orders.until(() => orders.deadLetters.length === 1),
    );
    expect(orders.declinedAttempts).toEqual([1, 2, 3]);
    const [dead] = orders.deadLetters;
    expect(dead?.order).toEqual({ id: 7, sku: "plum" });
    expect(dead?.origin).toMatchObject({ source: topics.declined, reason: "max-attempts" });
    expect(dead?.origin?.position).toEqual(expect.any(String));
  });
}
