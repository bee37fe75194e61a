// The rows that price @ruststream/otel: the middleware on the app with no tracer provider registered
// (off), and on, under the OpenTelemetry SDK set up as a service sets it up: a tracer provider
// registered globally with the Node context manager, a BatchSpanProcessor in front of an exporter,
// sampling every trace (and, in a row of its own, 1% of them). The exporter drops what it gets (a
// real one sends it to a collector off the dispatch path, on the processor's timer), so the row
// prices making, ending and batching the spans. Beside them the floors: the same SDK making bare
// spans and nothing else, which is what any tracing of every delivery costs before it does anything
// of its own.
import type { Tracer } from "@opentelemetry/api";
import type { RustStream } from "@ruststream/core";
import { packageAt } from "../packageAt.js";
import type { OpsRow } from "./row.js";
import { registerSdk } from "./tracingSdk.js";

/**
 * The SDK as a service registers it; `sampled`: a parent-based sampler keeping 1% of new traces,
 * as a busy service runs it, so most deliveries make spans that are not recorded. `ref`: the
 * package as it was at that commit (../packageAt.ts), for a before/after in one run.
 */
export async function tracingOn(
  sampled: boolean,
  ref?: string,
): Promise<(app: RustStream) => void> {
  await registerSdk(sampled);
  const { tracing } =
    ref === undefined
      ? await import("@ruststream/otel")
      : (await packageAt<typeof import("@ruststream/otel")>("otel", ref)).module;
  return (app) => {
    app.use(tracing());
  };
}

/** A span started and ended around `next()`, with nothing set on it. */
function bareSpan(tracer: Tracer, name: string, next: () => unknown): unknown {
  const span = tracer.startSpan(name);
  // The bench's handlers return at once, so the span ends with the call.
  const result = next();
  span.end();
  return result;
}

/**
 * The floor under any tracing of every delivery: the same SDK provider the tracing rows register,
 * its own tracer (as `tracing()` takes it, not through the global proxy), and a consume middleware
 * that only starts and ends one span per delivery (no attributes, no context made active, nothing
 * on the wire). With `publishes`, a publish middleware that does the same around each publish (a
 * reply), so the reply path's floor makes as many spans as `tracing()` does there.
 */
export async function sdkSpanFloor(publishes: boolean): Promise<(app: RustStream) => void> {
  const provider = await registerSdk(false);
  const tracer = provider.getTracer("bench floor");
  return (app) => {
    app.use({
      consume: (_message, _ctx, next) => bareSpan(tracer, "process", next),
      ...(publishes
        ? {
            publish: (message, next) => {
              const span = tracer.startSpan("send");
              return next(message).then((receipt) => {
                span.end();
                return receipt;
              });
            },
          }
        : {}),
    });
  };
}

/**
 * The floor with the attributes `tracing()` gives its spans here (the messaging conventions': the
 * bench's deliveries and replies make the same ones every time, so they are made once): what the
 * SDK charges for taking them, apart from what making them costs the package.
 */
async function sdkSpanWithAttributes(): Promise<(app: RustStream) => void> {
  const provider = await registerSdk(false);
  const tracer = provider.getTracer("bench floor");
  const { SpanKind } = await import("@opentelemetry/api");
  const processSpan = {
    kind: SpanKind.CONSUMER,
    attributes: {
      "messaging.system": "memory",
      "messaging.destination.name": "orders",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "ruststream.attempt": 1,
      "messaging.consumer.group.name": "bench",
    },
  };
  const sendSpan = {
    kind: SpanKind.PRODUCER,
    attributes: {
      "messaging.system": "memory",
      "messaging.destination.name": "receipts",
      "messaging.operation.type": "send",
      "messaging.operation.name": "send",
      "ruststream.publish.purpose": "reply",
    },
  };
  return (app) => {
    app.use({
      consume: (_message, _ctx, next) => {
        const span = tracer.startSpan("process orders", processSpan);
        const result = next();
        span.end();
        return result;
      },
      publish: (message, next) => {
        const span = tracer.startSpan("send receipts", sendSpan);
        return next(message).then((receipt) => {
          span.end();
          return receipt;
        });
      },
    });
  };
}

const floor = "tracing floor: one bare SDK span per delivery";
const floorWithPublish = "tracing floor: one bare SDK span per delivery and per publish";
const floorWithAttributes =
  "tracing floor: one SDK span per delivery and per publish, with tracing()'s attributes";

/**
 * `OTEL_AT=<ref>` in the environment adds a row of `tracing()` as the package was at that commit,
 * held against the same floors: a change to the package measured before and after in one run.
 */
export const otelAt = process.env.OTEL_AT === "" ? undefined : process.env.OTEL_AT;

export const tracingRows: readonly OpsRow[] = [
  {
    name: "tracing loaded, off",
    async prepare() {
      const { tracing } = await import("@ruststream/otel");
      return (app) => {
        app.use(tracing());
      };
    },
  },
  {
    name: "tracing on",
    against: [floor, floorWithPublish, floorWithAttributes],
    prepare: () => tracingOn(false),
  },
  ...(otelAt === undefined
    ? []
    : [
        {
          name: `tracing on, @ruststream/otel at ${otelAt}`,
          against: [floor, floorWithPublish, floorWithAttributes],
          prepare: () => tracingOn(false, otelAt),
        },
      ]),
  {
    name: "tracing on, 1% sampled",
    prepare: () => tracingOn(true),
  },
  {
    name: floor,
    prepare: () => sdkSpanFloor(false),
  },
  {
    name: floorWithPublish,
    prepare: () => sdkSpanFloor(true),
  },
  {
    name: floorWithAttributes,
    prepare: sdkSpanWithAttributes,
  },
];
