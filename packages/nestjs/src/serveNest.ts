import {
  type HandlerContext,
  headerNames,
  isOutcome,
  type Logger,
  type RunningApp,
  undecodable,
} from "@ruststream/core";
import { isObservable, lastValueFrom } from "rxjs";
import { errorReply } from "./errorReply.js";
import { isGuardRefusal, refusalOutcome } from "./guardRefusal.js";
import { handlerFailure } from "./handlerFailure.js";
import type { PatternOptions } from "./patternOptions.js";
import { isPayloadRejection } from "./payloadRejection.js";
import { lastReply, type ReplyStream, replyStreamOf, streamReplies } from "./replyStream.js";
import { RustStreamContext } from "./rustStreamContext.js";

/** One message for a Nest handler: what it is served as. */
export interface NestServing {
  /** The pattern (or subscriber) name, for the failure's message. */
  readonly pattern: string;
  /** The message asked for a reply (a `send`: a reply pattern, and `reply-to` on the message). */
  readonly answers: boolean;
  /** The pattern's options, for the dead letter a guard's refusal goes to. */
  readonly options: PatternOptions;
  readonly log: Logger;
  /** Where an Observable's values go one by one, for a request that takes several replies. */
  readonly stream: ReplyStream | undefined;
}

/**
 * What one delivery is for a Nest handler: its `@Ctx()`, and how it is served. It asks for a reply
 * when it came to a replying pattern with a `reply-to` (a `send`; an `emit` to a message pattern is
 * served as an event, as Nest's transports do). `app` is the running app, which publishes a streamed
 * reply's values.
 */
export function nestServing(
  pattern: string,
  replies: boolean,
  options: PatternOptions,
  ctx: HandlerContext,
  app: () => Promise<RunningApp>,
): { readonly context: RustStreamContext; readonly serving: NestServing } {
  const answers = replies && (ctx.headers.getString(headerNames.replyTo) ?? "") !== "";
  const stream = answers ? replyStreamOf(ctx, options.codec, app) : undefined;
  return {
    context: new RustStreamContext([ctx, pattern]),
    serving: { pattern, answers, options, log: ctx.log, stream },
  };
}

/**
 * Runs a Nest-wrapped handler (pipes, guards, interceptors and filters around it) and makes its
 * result what the runtime takes. A value, a Promise or an Observable counts by its last value: an
 * outcome of the runtime's is applied as it is; anything else is the reply where one was asked for
 * (JSON has no undefined: nothing answers null). To a request that takes several replies (a
 * `ClientRustStream.send`) an Observable's values are streamed instead, each a reply of its own,
 * then the end mark (see `streamReplies`). A failure asked for a reply answers the caller
 * with the error, as Nest's transports do, and the delivery is done (the caller has its answer; a
 * retry would run the handler for nobody). Otherwise a payload a pipe rejected is the runtime's
 * `undecodable` outcome, settled by the decode policy as a payload that failed to decode (a
 * fail-fast policy stops the app), a message a guard refused is dead-lettered (reason
 * `forbidden`) or dropped, and any other failure rejects: a failed attempt, retried by the failure
 * policy.
 */
export async function serveNest(invoke: () => unknown, serving: NestServing): Promise<unknown> {
  let value: unknown;
  const stream = serving.stream;
  try {
    const result = await invoke();
    if (isObservable(result) && stream !== undefined) return await streamReplies(result, stream);
    value = isObservable(result)
      ? await lastValueFrom(result, { defaultValue: undefined })
      : result;
  } catch (error) {
    if (serving.answers) {
      return stream === undefined ? errorReply(error) : lastReply(stream, errorReply(error));
    }
    if (isPayloadRejection(error)) return undecodable(error);
    if (isGuardRefusal(error)) return refusalOutcome(serving.options, serving.log);
    throw handlerFailure(serving.pattern, error);
  }
  if (isOutcome(value)) return value;
  return serving.answers ? (value ?? null) : undefined;
}
