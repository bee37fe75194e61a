// RustStreamModule: a RustStream app inside a real Nest 12 application (started on bootstrap,
// stopped on close), handlers as methods of providers with injection and Nest's enhancers around
// them, and the same module under `Test.createTestingModule` with `TestApp` running the app
// in-process (a ValidationPipe's rejection settled by each decode policy; a method's Observable
// streamed through its interceptor, an error midway through its filter). On the file broker.
import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BadRequestException,
  type CallHandler,
  type CanActivate,
  Catch,
  type DynamicModule,
  type ExceptionFilter,
  type ExecutionContext,
  Inject,
  Injectable,
  Module,
  type NestInterceptor,
  Scope,
  UseFilters,
  UseGuards,
  UseInterceptors,
  ValidationPipe,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { Ctx, Payload, RpcException } from "@nestjs/microservices";
import { Test } from "@nestjs/testing";
import { type DecodeFailureEvent, isRustStreamError, type RunningApp } from "@ruststream/core";
import { FileBroker } from "@ruststream/file";
import { TestApp } from "@ruststream/testing";
import { within } from "@ruststream/tooling-testkit";
import { IsInt, IsString } from "class-validator";
import { concat, EMPTY, lastValueFrom, map, type Observable, range, throwError } from "rxjs";
import { afterAll, describe, expect, it } from "vitest";
import { readErrorReply } from "../src/errorReply.js";
import {
  ClientRustStream,
  type RustStreamContext,
  RustStreamHost,
  RustStreamModule,
  Subscriber,
} from "../src/index.js";
import { isEndReply } from "../src/replyStream.js";
import { Seen } from "./seen.js";

const dir = mkdtempSync(join(tmpdir(), "rs-nestjs-module-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

class OrderDto {
  @IsInt() id!: number;
  @IsString() sku!: string;
}

@Injectable()
class Prices {
  price(_sku: string): number {
    return 3;
  }
}

class StampInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const type = context.getType();
    return next.handle().pipe(map((value: unknown) => ({ value, type })));
  }
}

/** Lets nothing through, as a guard refusing a caller does. */
class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

class LostParcel extends Error {}

/** Tells the caller where the parcel was lost: what a filter makes of the exception is the answer. */
@Catch(LostParcel)
class LostParcelFilter implements ExceptionFilter<LostParcel> {
  catch(exception: LostParcel): Observable<never> {
    return throwError(() => new RpcException(`parcel lost ${exception.message}`));
  }
}

// vitest emits no parameter types, so the pipe is told the payload's class.
const validOrder = new ValidationPipe({ expectedType: OrderDto, transform: true });

@Injectable()
class ShopHandlers {
  readonly #prices: Prices;
  readonly #seen: Seen;

  constructor(@Inject(Prices) prices: Prices, @Inject(Seen) seen: Seen) {
    this.#prices = prices;
    this.#seen = seen;
  }

  @Subscriber("orders", { deadLetter: "orders-dlq" })
  order(
    @Payload(new ValidationPipe({ expectedType: OrderDto, transform: true })) order: OrderDto,
    @Ctx() ctx: RustStreamContext,
  ): void {
    this.#seen.saw(order instanceof OrderDto ? `order ${order.sku}` : "order, untyped", ctx);
  }

  @Subscriber("loose-orders")
  looseOrder(@Payload(validOrder) order: OrderDto, @Ctx() ctx: RustStreamContext): void {
    this.#seen.saw(`loose order ${order.sku}`, ctx);
  }

  @Subscriber("strict-orders", { deadLetter: "strict-dlq", failure: { decode: "fail-fast" } })
  strictOrder(@Payload(validOrder) order: OrderDto, @Ctx() ctx: RustStreamContext): void {
    this.#seen.saw(`strict order ${order.sku}`, ctx);
  }

  @Subscriber("prices", { reply: true })
  @UseInterceptors(StampInterceptor)
  price(@Payload("sku") sku: string): number {
    return this.#prices.price(sku);
  }

  /** A parcel's stops, one reply each; lost after the last one when `lost` says so. */
  @Subscriber("parcel", { reply: true })
  @UseInterceptors(StampInterceptor)
  @UseFilters(LostParcelFilter)
  parcel(@Payload() trip: { stops: number; lost: boolean }): Observable<number> {
    return concat(
      range(1, trip.stops),
      trip.lost ? throwError(() => new LostParcel(`after stop ${trip.stops}`)) : EMPTY,
    );
  }

  @Subscriber("declines", { reply: true })
  declines(): never {
    throw new RpcException("payment declined");
  }

  @Subscriber("vault", { reply: true })
  @UseGuards(DenyAll)
  vault(): string {
    return "never";
  }
}

function shopModule(rustStream: DynamicModule): new () => object {
  @Module({ imports: [rustStream], providers: [Prices, Seen, ShopHandlers] })
  class ShopModule {}
  return ShopModule;
}

const streamPath = "SHOP_STREAM";

@Module({
  providers: [{ provide: streamPath, useFactory: () => join(dir, `shop-${++files}.ss`) }],
  exports: [streamPath],
})
class ConfigModule {}

/** The shop module under TestApp, on a file broker of its own, its app started by TestApp. */
async function testApp(
  file: string,
): Promise<{ t: TestApp; seen: Seen; close: () => Promise<void> }> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      shopModule(
        RustStreamModule.forRoot({
          broker: new FileBroker({ path: join(dir, `${file}-${++files}.ss`) }),
          name: "shop",
          start: "manual",
        }),
      ),
    ],
  }).compile();
  moduleRef.useLogger(false);
  await moduleRef.init();
  const t = await TestApp.start(moduleRef.get(RustStreamHost).app);
  return { t, seen: moduleRef.get(Seen), close: () => moduleRef.close() };
}

describe("RustStreamModule in a Nest application", () => {
  it("starts on bootstrap from forRootAsync's options, serves the providers' methods, answers a failed send with its error, and stops on close", async () => {
    const app = await NestFactory.createApplicationContext(
      shopModule(
        RustStreamModule.forRootAsync({
          imports: [ConfigModule],
          inject: [streamPath],
          useFactory: (path: string) => ({
            broker: new FileBroker({ path, consumer: "shop" }),
            name: "shop",
          }),
        }),
      ),
      { logger: false },
    );
    const host = app.get(RustStreamHost);
    const running = host.unwrap<RunningApp>();
    expect(running.state).toBe("ready");
    expect([...running.subscribers].sort()).toEqual([
      "ShopHandlers.declines",
      "ShopHandlers.looseOrder",
      "ShopHandlers.order",
      "ShopHandlers.parcel",
      "ShopHandlers.price",
      "ShopHandlers.strictOrder",
      "ShopHandlers.vault",
    ]);
    const client = new ClientRustStream({
      broker: new FileBroker({ path: app.get<string>(streamPath) }),
      timeoutMs: 20_000,
    });
    try {
      await expect(lastValueFrom(client.send("prices", { sku: "apple" }))).resolves.toEqual({
        value: 3,
        type: "rpc",
      });
      await expect(lastValueFrom(client.send("declines", {}))).rejects.toEqual({
        status: "error",
        message: "payment declined",
      });
      // A guard's refusal (a ForbiddenException here) answers as Nest's transports answer it.
      await expect(lastValueFrom(client.send("vault", {}))).rejects.toEqual({
        status: "error",
        message: "Forbidden resource",
      });
    } finally {
      await client.close();
      await app.close();
    }
    expect(running.state).toBe("stopped");
    expect(() => host.unwrap()).toThrow(/bootstrapped/);
  });

  it("under Test.createTestingModule, with a provider overridden, TestApp runs the module's app in-process", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        shopModule(
          RustStreamModule.forRoot({
            broker: new FileBroker({ path: join(dir, `testing-${++files}.ss`) }),
            name: "shop",
            start: "manual",
          }),
        ),
      ],
    })
      .overrideProvider(Prices)
      .useValue({ price: () => 7 })
      .compile();
    moduleRef.useLogger(false);
    await moduleRef.init();
    const t = await TestApp.start(moduleRef.get(RustStreamHost).app);
    try {
      expect(await t.request("prices", { sku: "apple" })).toEqual({ value: 7, type: "rpc" });
      await t.publish("orders", { id: 1, sku: "pear" });
      // The ValidationPipe rejects this one: settled by the decode policy, to the dead letter.
      await t.publish("orders", { id: "one", sku: "fig" });
      const seen = moduleRef.get(Seen);
      expect(seen.calls.map((c) => c.pattern)).toEqual(["order pear"]);
      t.subscriber("ShopHandlers.order").assertOutcomes("ack", "dead-letter");
      expect(t.published("orders-dlq").map((m) => m.value)).toEqual([{ id: "one", sku: "fig" }]);
    } finally {
      await t.stop();
      await moduleRef.close();
    }
  });

  it("under TestApp, a method's Observable is streamed, each value through its interceptor, in order; an error midway goes through its filter, after the values", async () => {
    const { t, close } = await testApp("testing");
    // A request that takes several replies, as ClientRustStream.send asks: each value, then the last.
    const stream = async (trip: { stops: number; lost: boolean }) => {
      const values: unknown[] = [];
      const last = t.running.request("parcel", trip, {
        timeoutMs: 5_000,
        onPartialReply: (value) => values.push(value),
      });
      await t.settle();
      return { values, last: await last };
    };
    try {
      const arrived = await stream({ stops: 3, lost: false });
      expect(arrived.values).toEqual([1, 2, 3].map((value) => ({ value, type: "rpc" })));
      expect(isEndReply(arrived.last)).toBe(true);
      const lost = await stream({ stops: 2, lost: true });
      expect(lost.values).toEqual([1, 2].map((value) => ({ value, type: "rpc" })));
      // The filter's RpcException, not the LostParcel (which would answer Internal server error).
      expect(readErrorReply(lost.last)).toEqual({
        err: { status: "error", message: "parcel lost after stop 2" },
      });
      // Answered, so acked: no retry runs the method for nobody.
      t.subscriber("ShopHandlers.parcel").assertOutcomes("ack", "ack");
    } finally {
      await t.stop();
      await close();
    }
  });
});

describe("a ValidationPipe's rejection in RustStreamModule, by the decode policy", () => {
  function decodeFailures(t: TestApp): DecodeFailureEvent[] {
    return t.events.filter((e): e is DecodeFailureEvent => e.type === "decode-failure");
  }

  it("by default, with no dead letter declared: dropped, never retried, the app still running", async () => {
    const { t, seen, close } = await testApp("rejections");
    try {
      await t.publish("loose-orders", { id: "one", sku: "fig" });
      await t.publish("loose-orders", { id: 2, sku: "plum" });
      t.subscriber("ShopHandlers.looseOrder").assertOutcomes("drop", "ack");
      expect(seen.calls.map((c) => c.pattern)).toEqual(["loose order plum"]);
      const [failure] = decodeFailures(t);
      expect(failure?.subscriber).toBe("ShopHandlers.looseOrder");
      expect(failure?.error).toBeInstanceOf(BadRequestException);
      t.assertRunning();
    } finally {
      await t.stop();
      await close();
    }
  });

  it("under failure.decode fail-fast: the app stopped, with the rejection as its failure", async () => {
    const { t, seen, close } = await testApp("rejections");
    try {
      await t.publish("strict-orders", { id: 1, sku: "pear" });
      await t.publish("strict-orders", { id: "one", sku: "fig" });
      const report = await within(20_000, "the app's fail-fast stop", t.running.stopped);
      expect(report.failed).toBe(true);
      expect(report.failure).toBeInstanceOf(BadRequestException);
      expect(() => t.assertRunning()).toThrow(/not running: a fail-fast policy fired/);
      expect(seen.calls.map((c) => c.pattern)).toEqual(["strict order pear"]);
      expect(t.published("strict-dlq")).toEqual([]);
      expect(decodeFailures(t).map((e) => e.error)).toEqual([report.failure]);
    } finally {
      await close();
    }
  });
});

describe("what RustStreamModule refuses", () => {
  it("an option @Subscriber does not know, when the class is declared", () => {
    const declare = () => {
      class Misspelt {
        @Subscriber("orders", { maxAttempt: 5 } as never)
        handle(): void {}
      }
      return Misspelt;
    };
    expect(declare).toThrow(/unknown option "maxAttempt"/);
  });

  it("a regular expression as @Subscriber's source, naming the broker's wildcard descriptor instead", () => {
    const declare = () => {
      class ByExpression {
        @Subscriber(/^orders\./ as never)
        handle(): void {}
      }
      return ByExpression;
    };
    expect(declare).toThrow(
      /@Subscriber\(\/\^orders\\.\/\): no RustStream broker subscribes by regular expression.*new NatsSubject/,
    );
  });

  it("options without a broker or a name, when the module is made", () => {
    const made = [
      () => RustStreamModule.forRoot({ name: "x" } as never),
      () =>
        RustStreamModule.forRoot({ broker: new FileBroker({ path: join(dir, "u.ss") }), name: "" }),
    ].map((make) => {
      try {
        make();
        return "made";
      } catch (error) {
        return isRustStreamError(error, "invalid-argument") ? "invalid-argument" : String(error);
      }
    });
    expect(made).toEqual(["invalid-argument", "invalid-argument"]);
  });

  it("a @Subscriber on a request-scoped provider, when the application starts", async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @Subscriber("orders")
      handle(): void {}
    }
    @Module({
      imports: [
        RustStreamModule.forRoot({
          broker: new FileBroker({ path: join(dir, `scoped-${++files}.ss`) }),
          name: "scoped",
        }),
      ],
      providers: [PerRequest],
    })
    class ScopedModule {}
    const refused = await NestFactory.createApplicationContext(ScopedModule, {
      logger: false,
      abortOnError: false,
    })
      .then(async (app) => {
        await app.close();
        return "started";
      })
      .catch((error: unknown) => error);
    expect(String(refused)).toContain("request-scoped");
  });
});
