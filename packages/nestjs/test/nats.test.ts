// The documented service on a real NATS server (core subjects: each pattern a subject), and what a
// regular-expression pattern takes there: the subjects a wildcard subscription reads, named in the
// pattern's extras, since no RustStream broker subscribes by regular expression.
import "reflect-metadata";
import { Controller, Inject, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { Ctx, EventPattern, Payload } from "@nestjs/microservices";
import { isRustStreamError } from "@ruststream/core";
import { NatsBroker, NatsSubject } from "@ruststream/nats";
import { requireEnv, uniqueName, within } from "@ruststream/tooling-testkit";
import { lastValueFrom } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { ClientRustStream, type RustStreamContext, RustStreamServer } from "../src/index.js";
import { documentedServiceTests, type Setup } from "./ordersScenario.js";
import { Seen } from "./seen.js";

const broker = () => new NatsBroker({ servers: requireEnv("NATS_URL") });

function setup(): Setup {
  return {
    topics: {
      created: uniqueName("nest-created"),
      sum: uniqueName("nest-sum"),
      track: uniqueName("nest-track"),
      lost: uniqueName("nest-lost"),
      declined: uniqueName("nest-declined"),
      deadLetters: uniqueName("nest-dlq"),
    },
    server: broker(),
    client: broker(),
  };
}

describe("a Nest microservice on NATS subjects", () => {
  documentedServiceTests(setup, "strategy");
});

/** The regular expression Nest's Kafka transport would subscribe by: every region's orders. */
const regionsOf = (prefix: string) => new RegExp(`^${prefix}\\.[a-z]+$`);

/** A controller whose one handler takes every subject under `prefix` by a regular expression. */
function regionsModule(prefix: string, withSource: boolean): new () => object {
  const source = new NatsSubject(`${prefix}.*`, { redeliverTo: `${prefix}.retry` });
  @Controller()
  class RegionsController {
    readonly #seen: Seen;

    constructor(@Inject(Seen) seen: Seen) {
      this.#seen = seen;
    }

    @EventPattern(regionsOf(prefix), withSource ? { ruststream: { source } } : {})
    order(@Payload() order: { id: number }, @Ctx() ctx: RustStreamContext) {
      this.#seen.saw(`${ctx.getTopic()} #${order.id} by ${ctx.getPattern()}`, ctx);
    }
  }

  @Module({ controllers: [RegionsController], providers: [Seen] })
  class RegionsModule {}
  return RegionsModule;
}

describe("a regular-expression pattern", () => {
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  it("reads the subjects its extras' wildcard subscription names, each delivery with its own subject", async () => {
    const prefix = uniqueName("nest-regions");
    const app = await NestFactory.createMicroservice(regionsModule(prefix, true), {
      strategy: new RustStreamServer({ broker: broker(), name: "regions" }),
      logger: false,
    });
    await app.listen();
    closing.push(() => app.close());
    const client = new ClientRustStream({ broker: broker(), timeoutMs: 20_000 });
    closing.push(() => client.close());
    await lastValueFrom(client.emit(`${prefix}.eu`, { id: 1 }), { defaultValue: undefined });
    await lastValueFrom(client.emit(`${prefix}.us`, { id: 2 }), { defaultValue: undefined });
    const seen = app.get(Seen);
    // The subscriber is named by the expression; the deliveries carry their own subjects.
    const pattern = String(regionsOf(prefix));
    await within(
      20_000,
      "both regions' orders handled",
      seen.until(() => seen.calls.length === 2),
    );
    expect(seen.calls.map((call) => call.pattern).sort()).toEqual([
      `${prefix}.eu #1 by ${pattern}`,
      `${prefix}.us #2 by ${pattern}`,
    ]);
  });

  it("without a source in its extras is refused when the microservice listens, naming the fix", async () => {
    const prefix = uniqueName("nest-regions");
    const app = await NestFactory.createMicroservice(regionsModule(prefix, false), {
      strategy: new RustStreamServer({ broker: broker(), name: "regions" }),
      logger: false,
    });
    closing.push(() => app.close());
    const error = await app.listen().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isRustStreamError(error, "unsupported")).toBe(true);
    expect((error as Error).message).toContain(
      `pattern ${String(regionsOf(prefix))}: no RustStream broker subscribes by regular expression`,
    );
    expect((error as Error).message).toContain("source: new NatsSubject");
  });
});
