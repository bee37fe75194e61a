// Nest's pipes, interceptors and exception filters around the transport strategy's handlers, as
// Nest's own transports run them (Nest's listeners wrap every handler of any `Server` before the
// strategy gets it), and what their outcomes become here: a filter may return one of the
// runtime's outcomes, a ValidationPipe's rejection is settled by the decode policy (a fail-fast
// one stops the app), and a `send`
// whose handler fails is answered with the error instead of timing out. On the file broker.
import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BadRequestException,
  type CallHandler,
  type CanActivate,
  Catch,
  Controller,
  type ExecutionContext,
  type INestMicroservice,
  Inject,
  Module,
  type NestInterceptor,
  type RpcExceptionFilter,
  UseFilters,
  UseGuards,
  UseInterceptors,
  ValidationPipe,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { Ctx, EventPattern, MessagePattern, Payload, RpcException } from "@nestjs/microservices";
import { deadLetter, type RunningApp, readDeadLetterOrigin } from "@ruststream/core";
import { FileBroker } from "@ruststream/file";
import { within } from "@ruststream/tooling-testkit";
import { IsInt, IsString } from "class-validator";
import { lastValueFrom, map, type Observable, of } from "rxjs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  ClientRustStream,
  PayloadRejectionFilter,
  type RustStreamContext,
  RustStreamServer,
} from "../src/index.js";
import { Seen } from "./seen.js";

const dir = mkdtempSync(join(tmpdir(), "rs-nestjs-enhancers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

class OrderDto {
  @IsInt() id!: number;
  @IsString() sku!: string;
}

class OutOfStock extends Error {}

/** Turns an exception into one of the runtime's outcomes: dead-lettered at once, with a reason. */
@Catch(OutOfStock)
class OutOfStockFilter implements RpcExceptionFilter<OutOfStock> {
  catch(exception: OutOfStock): Observable<unknown> {
    return of(deadLetter(`out of stock: ${exception.message}`));
  }
}

/** Wraps a reply, as an interceptor around any Nest handler may. */
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

// vitest emits no parameter types, so the pipe is told the payload's class.
const validOrder = new ValidationPipe({ expectedType: OrderDto, transform: true });

@Controller()
class EnhancedController {
  readonly #seen: Seen;

  constructor(@Inject(Seen) seen: Seen) {
    this.#seen = seen;
  }

  @MessagePattern("stamped")
  @UseInterceptors(StampInterceptor)
  stamped(@Payload() n: number): number {
    return n + 1;
  }

  @EventPattern<string>("stock", { ruststream: { deadLetter: "stock-dlq" } })
  @UseFilters(OutOfStockFilter)
  stock(@Payload() sku: string, @Ctx() ctx: RustStreamContext): void {
    this.#seen.saw("stock", ctx);
    throw new OutOfStock(sku);
  }

  @EventPattern<string>("orders", { ruststream: { deadLetter: "orders-dlq" } })
  order(@Payload(validOrder) order: OrderDto, @Ctx() ctx: RustStreamContext): void {
    this.#seen.saw(order instanceof OrderDto ? `order ${order.sku}` : "order, untyped", ctx);
  }

  @EventPattern<string>("strict-orders", {
    ruststream: { deadLetter: "strict-dlq", failure: { decode: "fail-fast" } },
  })
  strictOrder(@Payload(validOrder) order: OrderDto, @Ctx() ctx: RustStreamContext): void {
    this.#seen.saw(`strict order ${order.sku}`, ctx);
  }

  @MessagePattern("quote")
  quote(@Payload(validOrder) order: OrderDto): string {
    return `quote for ${order.sku}`;
  }

  @MessagePattern("declines")
  declines(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): never {
    this.#seen.saw("declines", ctx);
    throw new RpcException("payment declined");
  }

  @MessagePattern("breaks")
  breaks(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): never {
    this.#seen.saw("breaks", ctx);
    throw new Error("a bug with internals in its message");
  }

  @EventPattern<string>("vault", { ruststream: { deadLetter: "vault-dlq" } })
  @UseGuards(DenyAll)
  vault(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): void {
    this.#seen.saw("vault", ctx);
  }

  @MessagePattern("vault-quote")
  @UseGuards(DenyAll)
  vaultQuote(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): string {
    this.#seen.saw("vault-quote", ctx);
    return "never";
  }

  @EventPattern<string>("vault-dlq")
  vaultDeadLetters(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): void {
    this.#sawDeadLetter(ctx);
  }

  @EventPattern<string>("stock-dlq")
  stockDeadLetters(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): void {
    this.#sawDeadLetter(ctx);
  }

  @EventPattern<string>("orders-dlq")
  orderDeadLetters(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): void {
    this.#sawDeadLetter(ctx);
  }

  @EventPattern<string>("strict-dlq")
  strictDeadLetters(@Payload() _: unknown, @Ctx() ctx: RustStreamContext): void {
    this.#sawDeadLetter(ctx);
  }

  #sawDeadLetter(ctx: RustStreamContext): void {
    const origin = readDeadLetterOrigin(ctx.getHeaders());
    this.#seen.saw(`dead letter from ${origin?.source}: ${origin?.reason}`, ctx);
  }
}

@Module({ controllers: [EnhancedController], providers: [Seen] })
class EnhancedModule {}

describe("Nest's enhancers around the transport strategy's handlers", () => {
  let running: { app: INestMicroservice; client: ClientRustStream } | undefined;

  afterEach(async () => {
    const current = running;
    running = undefined;
    await current?.client.close();
    await current?.app.close();
  });

  async function start(
    rejections = true,
  ): Promise<{ seen: Seen; client: ClientRustStream; running: () => RunningApp }> {
    const path = join(dir, `enhancers-${++files}.ss`);
    const server = new RustStreamServer({
      broker: new FileBroker({ path, consumer: "enhancers" }),
      name: "enhancers",
      defaults: { maxAttempts: 2, failure: { backoff: { initialMs: 10, maxMs: 50 } } },
    });
    const app = await NestFactory.createMicroservice(EnhancedModule, {
      strategy: server,
      logger: false,
    });
    if (rejections) app.useGlobalFilters(new PayloadRejectionFilter());
    await app.listen();
    const client = new ClientRustStream({ broker: new FileBroker({ path }), timeoutMs: 20_000 });
    running = { app, client };
    return { seen: app.get(Seen), client, running: () => server.unwrap<RunningApp>() };
  }

  async function emit(client: ClientRustStream, pattern: string, data: unknown): Promise<void> {
    await lastValueFrom(client.emit(pattern, data), { defaultValue: undefined });
  }

  it("an interceptor wraps the reply, in Nest's rpc context", async () => {
    const { client } = await start();
    await expect(lastValueFrom(client.send("stamped", 41))).resolves.toEqual({
      value: 42,
      type: "rpc",
    });
  });

  it("an exception filter that returns a runtime outcome has it applied: dead-lettered at the first attempt", async () => {
    const { seen, client } = await start();
    await emit(client, "stock", "plum");
    const given = "dead letter from stock: out of stock: plum";
    await within(
      20_000,
      "the dead letter",
      seen.until(() => seen.of(given).length === 1),
    );
    expect(seen.of("stock")).toEqual([1]);
  });

  it("a ValidationPipe's rejection is settled by the decode policy (the dead letter, reason decode), never retried; a valid payload arrives typed", async () => {
    const { seen, client, running } = await start();
    await emit(client, "orders", { id: "not a number", sku: "apple" });
    await emit(client, "orders", { id: 1, sku: "pear" });
    const given = "dead letter from orders: decode";
    await within(
      20_000,
      "the dead letter",
      seen.until(() => seen.of(given).length === 1),
    );
    await within(
      20_000,
      "the valid order",
      seen.until(() => seen.of("order pear").length === 1),
    );
    expect(seen.of("order, untyped")).toEqual([]);
    // Reason "decode": settled at once by the decode policy (a retried one would say max-attempts).
    expect(seen.of(given)).toHaveLength(1);
    expect(running().state).toBe("ready");
  });

  it("a ValidationPipe's rejection under failure.decode fail-fast stops the app, with the rejection as its failure", async () => {
    const { seen, client, running } = await start();
    const app = running();
    await emit(client, "strict-orders", { id: 1, sku: "fig" });
    await within(
      20_000,
      "the valid order",
      seen.until(() => seen.of("strict order fig").length === 1),
    );
    await emit(client, "strict-orders", { id: "not a number", sku: "apple" });
    const report = await within(20_000, "the app's fail-fast stop", app.stopped);
    expect(report.failed).toBe(true);
    expect(report.failure).toBeInstanceOf(BadRequestException);
    expect((report.failure as BadRequestException).getResponse()).toMatchObject({
      message: ["id must be an integer number"],
    });
    expect(app.state).toBe("stopped");
    // Stopped at the first attempt: neither a retry nor the dead letter ran the rejection again.
    expect(seen.of("strict order apple")).toEqual([]);
    expect(seen.of("dead letter from strict-orders: decode")).toEqual([]);
    expect(seen.of("dead letter from strict-orders: max-attempts")).toEqual([]);
  });

  it("without the rejection filter, Nest's default filter hides the rejection: a failed attempt, until maxAttempts", async () => {
    const { seen, client } = await start(false);
    await emit(client, "orders", { id: "not a number", sku: "apple" });
    const given = "dead letter from orders: max-attempts";
    await within(
      20_000,
      "the dead letter",
      seen.until(() => seen.of(given).length === 1),
    );
    expect(seen.of("order, untyped")).toEqual([]);
  });

  it("a guard's refusal is settled at once, never retried: the dead letter with reason forbidden; a send to a guarded pattern errors with Nest's refusal", async () => {
    const { seen, client } = await start();
    await emit(client, "vault", { id: 1 });
    const given = "dead letter from vault: forbidden";
    await within(
      20_000,
      "the dead letter",
      seen.until(() => seen.of(given).length === 1),
    );
    await expect(lastValueFrom(client.send("vault-quote", {}))).rejects.toEqual({
      status: "error",
      message: "Forbidden resource",
    });
    // The handlers never ran; a retried refusal would be dead-lettered with reason max-attempts.
    expect([...seen.of("vault"), ...seen.of("vault-quote")]).toEqual([]);
    expect(seen.of(given)).toHaveLength(1);
  });

  it("a send whose handler fails errors with Nest's error packet at once: an RpcException's own, else Internal server error", async () => {
    const { seen, client } = await start();
    await expect(lastValueFrom(client.send("declines", {}))).rejects.toEqual({
      status: "error",
      message: "payment declined",
    });
    await expect(lastValueFrom(client.send("breaks", {}))).rejects.toEqual({
      status: "error",
      message: "Internal server error",
    });
    const refused = await lastValueFrom(client.send("quote", { id: 1 })).catch((e: unknown) => e);
    expect(refused).toEqual({ status: "error", message: ["sku must be a string"] });
    await expect(lastValueFrom(client.send("quote", { id: 1, sku: "fig" }))).resolves.toBe(
      "quote for fig",
    );
    // Answered, so not retried: each handler ran once.
    expect([...seen.of("declines"), ...seen.of("breaks")]).toEqual([1, 1]);
  });
});
