import {
  type Attributes,
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import {
  type BatchMiddleware,
  type ConsumeMiddleware,
  type Delivery,
  headerNames,
  isOutcome,
} from "@ruststream/core";
import {
  attempt,
  batchMessageCount,
  consumerGroupName,
  conversationId,
  destinationName,
  destinationPartitionId,
  messageId,
  messagingSystem,
  operationName,
  operationType,
  outcome,
} from "./attributes.js";
import type { ConsumerSpans } from "./consumerSpans.js";
import { recordFailure } from "./failure.js";
import { SpanOnlyContext } from "./spanOnlyContext.js";
import { extractTraceContext } from "./traceContext.js";

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

function attributesOf(
  delivery: Delivery,
  deliveryAttempt: number,
  group: string | undefined,
): Attributes {
  const headers = delivery.headers;
  const attributes: Attributes = {
    [messagingSystem]: delivery.position.broker,
    [destinationName]: delivery.name,
    [operationType]: "process",
    [operationName]: "process",
    [attempt]: deliveryAttempt,
  };
  const id = headers.getString(headerNames.messageId);
  if (id !== undefined) attributes[messageId] = id;
  const correlation = headers.getString(headerNames.correlationId);
  if (correlation !== undefined) attributes[conversationId] = correlation;
  if (delivery.partition !== undefined)
    attributes[destinationPartitionId] = String(delivery.partition);
  if (group !== undefined) attributes[consumerGroupName] = group;
  return attributes;
}

/** Runs `next` with `span` active, ending the span when it returns or settles. */
function within(span: Span, next: () => unknown): unknown {
  let result: unknown;
  try {
    // The span's parent is in the span; the context the handler runs in holds the span alone.
    result = context.with(new SpanOnlyContext(span), next);
  } catch (error) {
    failed(span, error);
    throw error;
  }
  if (!isThenable(result)) {
    finish(span, result);
    return result;
  }
  return Promise.resolve(result).then(
    (value) => {
      finish(span, value);
      return value;
    },
    (error: unknown) => {
      failed(span, error);
      throw error;
    },
  );
}

function finish(span: Span, result: unknown): void {
  if (isOutcome(result)) span.setAttribute(outcome, result.kind);
  span.end();
}

function failed(span: Span, error: unknown): void {
  recordFailure(span, error);
  span.end();
}

/**
 * A consumer span per delivery, `process <destination>`: a child of the producer's context the
 * delivery carries (`traceparent`, `tracestate`) and linked to it, as the messaging conventions ask
 * of a process span; a new trace when it carries none. The handler runs with the span active, so
 * what it starts or publishes is inside it. The span ends when the handler returns; a throw or a
 * rejection marks it failed with the exception recorded.
 */
export function consumeMiddleware(
  tracerOf: () => Tracer | undefined,
  spans: ConsumerSpans,
): ConsumeMiddleware {
  return (_message, ctx, next) => {
    const tracer = tracerOf();
    if (tracer === undefined) return next();
    const delivery = ctx.delivery;
    const producer = extractTraceContext(delivery.headers);
    const options: SpanOptions = {
      kind: SpanKind.CONSUMER,
      attributes: attributesOf(delivery, ctx.attempt, ctx.group),
    };
    let parent: Context = ROOT_CONTEXT;
    if (producer !== undefined) {
      parent = new SpanOnlyContext(trace.wrapSpanContext(producer));
      options.links = [{ context: producer }];
    }
    const span = tracer.startSpan(`process ${delivery.name}`, options, parent);
    spans.remember(delivery, span);
    return within(span, next);
  };
}

/**
 * One consumer span per batch, `process <destination>`, as the messaging conventions make for a
 * batch: a new trace linked to each message's producer context (a batch has no one parent), with
 * the batch's size. What the handler publishes is inside it, and each message's retry copy or dead
 * letter becomes its child.
 */
export function consumeBatchMiddleware(
  tracerOf: () => Tracer | undefined,
  spans: ConsumerSpans,
): BatchMiddleware {
  return (_messages, ctx, next) => {
    const tracer = tracerOf();
    if (tracer === undefined) return next();
    const deliveries = ctx.deliveries;
    const first = deliveries[0];
    const attributes: Attributes = {
      [destinationName]: ctx.name,
      [operationType]: "process",
      [operationName]: "process",
      [batchMessageCount]: deliveries.length,
    };
    if (first !== undefined) attributes[messagingSystem] = first.position.broker;
    if (ctx.group !== undefined) attributes[consumerGroupName] = ctx.group;
    const links: { context: SpanContext }[] = [];
    for (const delivery of deliveries) {
      const producer = extractTraceContext(delivery.headers);
      if (producer !== undefined) links.push({ context: producer });
    }
    const span = tracer.startSpan(
      `process ${ctx.name}`,
      { kind: SpanKind.CONSUMER, attributes, links },
      ROOT_CONTEXT,
    );
    for (const delivery of deliveries) spans.remember(delivery, span);
    return within(span, next);
  };
}
