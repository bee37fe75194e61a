// What the test handlers saw, per pattern, with a wait for the condition a test expects.
import { Injectable } from "@nestjs/common";
import type { RustStreamContext } from "../src/index.js";

@Injectable()
export class Seen {
  readonly calls: {
    readonly pattern: string;
    readonly attempt: number;
    readonly tenant?: string;
    readonly key?: string;
  }[] = [];
  readonly #waiters: { readonly done: () => boolean; readonly resolve: () => void }[] = [];

  saw(pattern: string, ctx: RustStreamContext): void {
    const tenant = ctx.getHeaders().getString("x-tenant");
    const key = ctx.getKey();
    this.calls.push({
      pattern,
      attempt: ctx.getAttempt(),
      ...(tenant === undefined ? {} : { tenant }),
      ...(key === undefined ? {} : { key }),
    });
    for (const waiter of [...this.#waiters]) {
      if (!waiter.done()) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ done, resolve }));
  }

  of(pattern: string): number[] {
    return this.calls.filter((c) => c.pattern === pattern).map((c) => c.attempt);
  }
}
