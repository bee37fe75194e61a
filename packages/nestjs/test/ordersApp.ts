// The microservice of Nest's own documentation, as its users write it: a controller with an
// `@EventPattern` and a `@MessagePattern`, and a provider injected into it. The topic names are
// parameters so that each live run has its own streams on the shared server. Injection names its
// token (`@Inject(OrdersService)`): vitest compiles the decorators but emits no parameter types.
import "reflect-metadata";
import { Controller, type DynamicModule, Inject, Injectable, Module } from "@nestjs/common";
import { Ctx, EventPattern, MessagePattern, Payload, RpcException } from "@nestjs/microservices";
import { type DeadLetterOrigin, readDeadLetterOrigin } from "@ruststream/core";
import { concat, type Observable, of, ReplaySubject, take, throwError } from "rxjs";
import { type RustStreamContext, Subscriber } from "../src/index.js";

export interface Topics {
  readonly created: string;
  readonly sum: string;
  /** A request answered with a stream: an order's tracking, one status at a time. */
  readonly track: string;
  /** The same, for an order lost on the way: the stream fails after its second status. */
  readonly lost: string;
  readonly declined: string;
  readonly deadLetters: string;
}

export interface Order {
  readonly id: number;
  readonly sku: string;
}

export interface Handled {
  readonly order: Order;
  readonly topic: string;
  readonly attempt: number;
  readonly key: string | undefined;
}

export interface DeadLetter {
  readonly order: Order;
  readonly origin: DeadLetterOrigin | undefined;
}

/** What the handlers did, and a wait for the nth of each. */
@Injectable()
export class OrdersService {
  readonly handled: Handled[] = [];
  readonly declinedAttempts: number[] = [];
  readonly deadLetters: DeadLetter[] = [];
  readonly #waiters: { readonly done: () => boolean; readonly resolve: () => void }[] = [];

  record(handled: Handled): void {
    this.handled.push(handled);
    this.#wake();
  }

  decline(attempt: number): never {
    this.declinedAttempts.push(attempt);
    this.#wake();
    throw new RpcException(`payment declined (attempt ${attempt})`);
  }

  deadLettered(dead: DeadLetter): void {
    this.deadLetters.push(dead);
    this.#wake();
  }

  sum(numbers: readonly number[]): number {
    return numbers.reduce((a, b) => a + b, 0);
  }

  /** What the tracking stream waits for between its first status and the next: the test's word. */
  readonly shipped = new ReplaySubject<string>(1);

  /**
   * An order's tracking: "packed" at once, the next status only once `shipped` has one (which the
   * test sends when it has seen "packed": a stream sent back only at its end never gets there).
   */
  track(id: number): Observable<string> {
    return concat(
      of(`order ${id} packed`),
      this.shipped.pipe(take(1)),
      of(`order ${id} delivered`),
    );
  }

  /** An order's tracking that fails midway: two statuses, then the loss as an RpcException. */
  lose(id: number): Observable<string> {
    return concat(
      of(`order ${id} packed`, `order ${id} shipped`),
      throwError(() => new RpcException(`order ${id} lost in transit`)),
    );
  }

  /** Resolves once `done()` holds, checked after each thing the handlers record. */
  until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ done, resolve }));
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) {
      if (!waiter.done()) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}

/** The application module over `topics`; the declined orders get three attempts, then a dead letter. */
export function ordersModule(topics: Topics): new () => object {
  @Controller()
  class OrdersController {
    readonly #orders: OrdersService;

    constructor(@Inject(OrdersService) orders: OrdersService) {
      this.#orders = orders;
    }

    // `<string>`: Nest 12 would otherwise type the payload from a map of topics, whose handlers
    // take nothing typed after it (no `@Ctx()`); these topics are named at run time.
    @EventPattern<string>(topics.created)
    handleOrderCreated(@Payload() order: Order, @Ctx() ctx: RustStreamContext): void {
      this.#orders.record({
        order,
        topic: ctx.getTopic(),
        attempt: ctx.getAttempt(),
        key: ctx.getKey(),
      });
    }

    @MessagePattern(topics.sum)
    accumulate(@Payload() numbers: number[]): number {
      return this.#orders.sum(numbers);
    }

    @MessagePattern(topics.track)
    track(@Payload() id: number): Observable<string> {
      return this.#orders.track(id);
    }

    @MessagePattern(topics.lost)
    lose(@Payload() id: number): Observable<string> {
      return this.#orders.lose(id);
    }

    @EventPattern<string>(topics.declined, {
      ruststream: { maxAttempts: 3, deadLetter: topics.deadLetters },
    })
    handleDeclined(@Payload() _order: Order, @Ctx() ctx: RustStreamContext): void {
      this.#orders.decline(ctx.getAttempt());
    }

    // The dead-lettered copy is this handler's first attempt, under the default cap.
    @EventPattern<string>(topics.deadLetters)
    handleDeadLetter(@Payload() order: Order, @Ctx() ctx: RustStreamContext): void {
      this.#orders.deadLettered({ order, origin: readDeadLetterOrigin(ctx.getHeaders()) });
    }
  }

  @Module({ controllers: [OrdersController], providers: [OrdersService] })
  class AppModule {}

  return AppModule;
}

/**
 * The same handlers as methods of a provider on `RustStreamModule` (`rustStream` is its
 * `forRoot`), one controller moved off the transport: `@Subscriber` in place of the patterns.
 */
export function ordersHandlersModule(topics: Topics, rustStream: DynamicModule): new () => object {
  @Injectable()
  class OrdersHandlers {
    readonly #orders: OrdersService;

    constructor(@Inject(OrdersService) orders: OrdersService) {
      this.#orders = orders;
    }

    @Subscriber(topics.created)
    handleOrderCreated(@Payload() order: Order, @Ctx() ctx: RustStreamContext): void {
      this.#orders.record({
        order,
        topic: ctx.getTopic(),
        attempt: ctx.getAttempt(),
        key: ctx.getKey(),
      });
    }

    @Subscriber(topics.sum, { reply: true })
    accumulate(@Payload() numbers: number[]): number {
      return this.#orders.sum(numbers);
    }

    @Subscriber(topics.track, { reply: true })
    track(@Payload() id: number): Observable<string> {
      return this.#orders.track(id);
    }

    @Subscriber(topics.lost, { reply: true })
    lose(@Payload() id: number): Observable<string> {
      return this.#orders.lose(id);
    }

    @Subscriber(topics.declined, { maxAttempts: 3, deadLetter: topics.deadLetters })
    handleDeclined(@Payload() _order: Order, @Ctx() ctx: RustStreamContext): void {
      this.#orders.decline(ctx.getAttempt());
    }

    @Subscriber(topics.deadLetters)
    handleDeadLetter(@Payload() order: Order, @Ctx() ctx: RustStreamContext): void {
      this.#orders.deadLettered({ order, origin: readDeadLetterOrigin(ctx.getHeaders()) });
    }
  }

  @Module({ imports: [rustStream], providers: [OrdersService, OrdersHandlers] })
  class AppModule {}

  return AppModule;
}
