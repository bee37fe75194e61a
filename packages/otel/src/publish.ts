import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import {
  HeaderMap,
  headerNames,
  type OutgoingMessage,
  type PublishInfo,
  type PublishMiddleware,
  type Receipt,
} from "@ruststream/core";
import {
  conversationId,
  destinationName,
  messageId,
  messagingSystem,
  operationName,
  operationType,
  purpose,
} from "./attributes.js";
import type { ConsumerSpans } from "./consumerSpans.js";
import { recordFailure } from "./failure.js";
import { SpanOnlyContext } from "./spanOnlyContext.js";
import { extractTraceContext, injectTraceContext } from "./traceContext.js";

function attributesOf(message: OutgoingMessage, info: PublishInfo): Attributes {
  const attributes: Attributes = {
    [messagingSystem]: info.broker,
    [destinationName]: message.name,
    [operationType]: "send",
    [operationName]: "send",
    [purpose]: info.purpose,
  };
  const headers = message.headers;
  if (headers !== undefined) {
    const id = headers.getString(headerNames.messageId);
    if (id !== undefined) attributes[messageId] = id;
    const correlation = headers.getString(headerNames.correlationId);
    if (correlation !== undefined) attributes[conversationId] = correlation;
  }
  return attributes;
}

/** The trace context the message already carries, as a parent. */
function carried(message: OutgoingMessage): Context {
  const headers = message.headers;
  const found = headers === undefined ? undefined : extractTraceContext(headers);
  return found === undefined ? ROOT_CONTEXT : new SpanOnlyContext(trace.wrapSpanContext(found));
}

/**
 * The parent of a publish's span. A publish made for a delivery (reply, `ctx.out`, retry copy, dead
 * letter) is a child of that delivery's consumer span, or of a span the handler opened inside it;
 * a delivery that never reached a handler (it failed to decode) has no consumer span, and its
 * copy continues the trace the message carries. Any other publish is a child of the active span,
 * else of the context the caller put in its headers, else it starts a trace.
 */
function parentOf(message: OutgoingMessage, spans: ConsumerSpans): Context {
  const cause = message.cause;
  const active = context.active();
  const activeSpan = trace.getSpan(active);
  if (cause !== undefined) {
    const consumer = spans.of(cause);
    if (consumer === undefined) return carried(message);
    // The runtime publishes replies and copies after the handler, outside its span; a span that is
    // active and in the consumer's trace was opened by the handler under it, and is the closer parent.
    if (
      activeSpan !== undefined &&
      activeSpan.spanContext().traceId === consumer.spanContext().traceId
    ) {
      return active;
    }
    return new SpanOnlyContext(consumer);
  }
  if (activeSpan !== undefined && isSpanContextValid(activeSpan.spanContext())) return active;
  return carried(message);
}

function ended(span: { end(): void }, receipt: Receipt): Receipt {
  span.end();
  return receipt;
}

/**
 * A producer span per publish, `send <destination>`, whose context the message carries on
 * (`traceparent`, `tracestate`), so the consumer's span becomes its child. A request's span lasts
 * until its reply came, so the replier's spans fall inside it. A publish that fails marks the span
 * failed with the exception recorded.
 */
export function publishMiddleware(
  tracerOf: () => Tracer | undefined,
  spans: ConsumerSpans,
): PublishMiddleware {
  return (message, next, info) => {
    const tracer = tracerOf();
    if (tracer === undefined) return next(message);
    const span = tracer.startSpan(
      `send ${message.name}`,
      { kind: SpanKind.PRODUCER, attributes: attributesOf(message, info) },
      parentOf(message, spans),
    );
    const spanContext = span.spanContext();
    let traced = message;
    // A tracer that made no real span (a no-op one) leaves the message's own context in place.
    if (isSpanContextValid(spanContext)) {
      const headers = message.headers === undefined ? new HeaderMap() : message.headers.clone();
      traced = { ...message, headers: injectTraceContext(headers, spanContext) };
    }
    let sent: Promise<Receipt>;
    try {
      sent = next(traced);
    } catch (error) {
      recordFailure(span, error);
      span.end();
      throw error;
    }
    return sent.then(
      (receipt) => ended(span, receipt),
      (error: unknown) => {
        recordFailure(span, error);
        span.end();
        throw error;
      },
    );
  };
}
