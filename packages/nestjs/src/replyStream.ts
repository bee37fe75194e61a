import {
  type Codec,
  type HandlerContext,
  headerNames,
  isOutcome,
  type Outcome,
  type RunningApp,
  reply,
} from "@ruststream/core";
import {
  concatMap,
  EMPTY,
  from,
  lastValueFrom,
  materialize,
  type Observable,
  throwError,
} from "rxjs";
import { envelopeOf, isEnvelope } from "./replyEnvelope.js";

/** The one key of the reply that ends a streamed one: the handler's Observable completed. */
const endKey = "@ruststream/nestjs:end";

/**
 * Where a request that takes several replies is answered (its requester marked it with
 * `x-ruststream-reply-stream`, as `ClientRustStream.send` does): its `reply-to` and correlation id,
 * and the running app whose publishes carry each value there.
 */
export interface ReplyStream {
  readonly replyTo: string;
  readonly correlationId: string;
  readonly codec: Codec<unknown> | undefined;
  readonly app: () => Promise<RunningApp>;
}

/** The delivery's reply stream, or undefined for a request answered once (the last value). */
export function replyStreamOf(
  ctx: HandlerContext,
  codec: Codec<unknown> | undefined,
  app: () => Promise<RunningApp>,
): ReplyStream | undefined {
  const headers = ctx.headers;
  const replyTo = headers.getString(headerNames.replyTo);
  const correlationId = headers.getString(headerNames.correlationId);
  if (headers.getString(headerNames.replyStream) === undefined) return undefined;
  if (replyTo === undefined || replyTo === "" || correlationId === undefined) return undefined;
  return { replyTo, correlationId, codec, app };
}

/**
 * Streams an Observable's values back as Nest's transports do: each value is a reply of its own,
 * published as it comes (in order: each once the broker confirmed the one before), marked
 * `x-ruststream-more-replies`; what resolves is the last reply, the end mark, for the runtime to
 * publish once the handler is done. Every reply carries the correlation id as its partition key,
 * so a reply topic of several partitions keeps them in order. An error of the Observable rejects
 * (after the values it sent): the caller gets it as the last reply. An outcome among the values
 * is what resolves instead, applied as the last value's would be.
 */
export async function streamReplies(
  values: Observable<unknown>,
  stream: ReplyStream,
): Promise<unknown> {
  const running = await stream.app();
  const options = {
    headers: { [headerNames.correlationId]: stream.correlationId, [headerNames.moreReplies]: "1" },
    partitionKey: stream.correlationId,
    ...(stream.codec === undefined ? {} : { codec: stream.codec }),
  };
  // One of the runtime's outcomes (an exception filter's `of(deadLetter(...))`) is applied as on
  // any other pattern, not sent as a value.
  let outcome: Outcome | undefined;
  // Materialized, so that an error waits behind the values before it: concatMap would pass a
  // source's error on at once, dropping the values still queued behind a publish in flight.
  await lastValueFrom(
    values.pipe(
      materialize(),
      concatMap((notification) => {
        if (notification.kind === "E") return throwError(() => notification.error);
        if (notification.kind === "C") return EMPTY;
        const value: unknown = notification.value;
        if (!isOutcome(value)) return from(running.publish(stream.replyTo, value ?? null, options));
        outcome = value;
        return EMPTY;
      }),
    ),
    { defaultValue: undefined },
  );
  return outcome ?? lastReply(stream, endReply());
}

/** The last reply of a stream, keyed as its values were (see `streamReplies`). */
export function lastReply(stream: ReplyStream, value: unknown): unknown {
  return reply(value, { partitionKey: stream.correlationId });
}

function endReply(): Readonly<Record<string, unknown>> {
  return envelopeOf(endKey, true);
}

/** True for the reply that ends a streamed one. */
export function isEndReply(value: unknown): boolean {
  return isEnvelope(value, endKey);
}
