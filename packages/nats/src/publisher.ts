import {
  headerNames,
  type OutgoingMessage,
  type RawMessage,
  type Receipt,
  type Requester,
  type RequestOptions,
  RustStreamError,
} from "@ruststream/core";
import {
  assertPayloadBytes,
  type brokerMark,
  type PendingReply,
  publishRequest,
  requestMark,
  wireHeaders,
  writeDeadLetterOrigin,
} from "@ruststream/core/broker";
import type { Frame, NatsLink } from "./client/link.js";
import { headerLine, headerName } from "./headerValues.js";
import { jetStreamHeaders, natsDeadLetterHeaderNames, natsHeaderNames } from "./names.js";
import { JetStreamPosition } from "./position.js";
import { type NatsSchedule, scheduleLines } from "./schedule.js";
import { wholeSeconds } from "./ttl.js";

/** How a publisher sends: core NATS (default), or JetStream (resolving on the stream's acknowledgement). */
export interface NatsPublishSettings {
  /** Publish to JetStream: each publish resolves with the stream's acknowledgement. */
  readonly jetStream?: boolean;
}

/** The optimistic-concurrency checks JetStream makes before storing a message. */
export interface JetStreamExpectations {
  /** The stream that must store it. */
  readonly stream?: string;
  /** The stream's last sequence must be this. */
  readonly lastSequence?: bigint | number;
  /** The last sequence of a message on this subject must be this. */
  readonly lastSubjectSequence?: bigint | number;
  /** The last message's `Nats-Msg-Id` must be this. */
  readonly lastMsgId?: string;
}

/** Per-message settings of a JetStream publish (`ctx.out.x.publish(value, { options })`). */
export interface NatsPublishOptions {
  /** `Nats-Msg-Id`: the stream stores a message once per id within its duplicate window. */
  readonly msgId?: string;
  readonly expect?: JetStreamExpectations;
  /**
   * `Nats-TTL` (NATS 2.11): the stream removes the message this long after storing it, or keeps it
   * `"never"` past its age limit. Whole seconds, at least 1000 ms, as the server counts them; the
   * stream must allow it (`allow_msg_ttl`), or refuses the message.
   */
  readonly ttlMs?: number | "never";
  /**
   * `Nats-Schedule` (NATS 2.12): the message is a schedule, kept on the subject it is published to
   * (one a subject: a new one replaces it), and delivered to `schedule.target` at its time. The
   * stream must allow it (`allow_msg_schedules`; `declare: { messageSchedules: true }`), or refuses
   * the message. The receipt is the schedule's: where the stream stored it, not the delivery.
   */
  readonly schedule?: NatsSchedule;
}

/** What a JetStream publish resolves with: where the stream stored it, and whether it was a duplicate. */
export interface NatsReceipt extends Receipt {
  readonly stream: string;
  readonly sequence: bigint;
  /** True when the stream already held a message with this `Nats-Msg-Id` and stored nothing. */
  readonly duplicate: boolean;
}

/** What a publisher needs from its connection; implemented by the connected broker. */
export interface PublisherHost {
  readonly [brokerMark]: string;
  readonly link: NatsLink;
  assertOpen(): void;
  /** Records what a publish sent, for `published()` in-process. */
  sent(frame: Frame): void;
  /** The connection's reply inbox: a request's wait for its reply. */
  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply>;
}

/**
 * A live core NATS publisher. Core NATS has no receipt: a publish resolves once the server has
 * processed it (one flush round trip shared by every publish of the same moment). Requests go out
 * with a reply subject of the connection's inbox.
 */
export class NatsPublisher implements Requester<NatsPublishOptions> {
  readonly [requestMark] = true as const;
  readonly #host: PublisherHost;
  #flushing: Promise<void> | undefined;

  constructor(host: PublisherHost) {
    this.#host = host;
  }

  async publish(message: OutgoingMessage<NatsPublishOptions>): Promise<Receipt> {
    this.#host.assertOpen();
    const frame = frameOf(message, this.#host.link.maxPayload, false);
    this.#host.sent(frame);
    this.#host.link.publish(frame);
    await this.#flush();
    this.#host.assertOpen();
    return { name: message.name };
  }

  async request(
    message: OutgoingMessage<NatsPublishOptions>,
    options: RequestOptions,
  ): Promise<RawMessage> {
    this.#host.assertOpen();
    return publishRequest(
      message,
      (correlationId) => this.#host.awaitReply(correlationId, options.timeoutMs),
      async (withInbox) => {
        const frame = frameOf(withInbox, this.#host.link.maxPayload, false);
        this.#host.sent(frame);
        this.#host.link.publish(frame);
      },
      options,
    );
  }

  /** One flush for every publish of the same moment: each resolves once the server has it. */
  #flush(): Promise<void> {
    this.#flushing ??= Promise.resolve().then(() => {
      this.#flushing = undefined;
      return this.#host.link.flush();
    });
    return this.#flushing;
  }
}

/**
 * The frame a message goes out as, or the refusal, before anything is sent: what every publish,
 * request and in-process injection go through, so all refuse the same messages. NATS carries
 * header values as text on one line, and at most the server's `max_payload` in all.
 */
export function frameOf(
  message: OutgoingMessage<NatsPublishOptions>,
  maxPayload: number,
  jetStream: boolean,
  marks: readonly (readonly [string, string])[] = [],
): Frame {
  assertPayloadBytes(message);
  if (typeof message.name !== "string" || message.name === "" || /[\s*>]/.test(message.name)) {
    throw new RustStreamError(
      "invalid-argument",
      `publish() needs a subject without spaces or wildcards, not ${JSON.stringify(message.name)}`,
    );
  }
  // The origin goes under the dead-letter names below, with the consumer beside it.
  const headers = wireHeaders(
    {
      ...(message.headers === undefined ? {} : { headers: message.headers }),
      ...(message.partitionKey === undefined ? {} : { partitionKey: message.partitionKey }),
    },
    natsHeaderNames.partitionKey,
  );
  if (message.deadLetterOrigin !== undefined) {
    writeDeadLetterOrigin(headers, message.deadLetterOrigin, natsDeadLetterHeaderNames);
    const cause = message.cause?.position;
    if (cause instanceof JetStreamPosition && cause.consumer !== undefined)
      headers.set(natsHeaderNames.deadLetterConsumer, cause.consumer);
  }
  if (message.options !== undefined && !jetStream) {
    throw new RustStreamError(
      "unsupported",
      "msgId, expect, ttlMs and schedule are JetStream's: publish with new NatsPublish({ jetStream: true })",
    );
  }
  const lines: (readonly [string, string])[] = [];
  let size = message.payload.length;
  for (const [name, bytes] of headers) {
    if (!headerName.test(name)) {
      throw new RustStreamError(
        "publish-refused",
        `NATS carries header names of visible characters other than ":": "${name}" cannot go on "${message.name}"`,
      );
    }
    const line = headerLine(bytes);
    lines.push([name, line]);
    size += name.length + line.length + 4;
  }
  // JetStream reads its own headers by their exact spelling, which a header map would lower-case.
  // `marks`: the headers a KV delete or purge carries, spelled as the clients read them too.
  for (const line of [
    ...optionLines(message.options, message.name, jetStream ? deadLetterMsgId(message) : undefined),
    ...marks,
  ]) {
    lines.push(line);
    size += line[0].length + line[1].length + 4;
  }
  if (size > maxPayload) {
    throw new RustStreamError(
      "publish-refused",
      `a message of ${size} bytes (payload and headers) for "${message.name}" is over the server's max_payload (${maxPayload}): send less, or raise max_payload in the server's configuration`,
    );
  }
  const replyTo = headers.getString(headerNames.replyTo);
  return {
    subject: message.name,
    // Copied now: the caller may reuse its buffers once the publish resolves.
    payload: message.payload.slice(),
    headers: lines,
    // A request's inbox is the native reply subject too, so "no responders" answers at once and a
    // plain NATS responder (msg.respond) finds it.
    reply: jetStream ? undefined : replyTo,
  };
}

/**
 * The `Nats-Msg-Id` of a dead letter written for a JetStream delivery: the message it stands for
 * (its stream and sequence) and the consumer that gave up on it. The runtime publishes a dead letter,
 * then acks the original; a process killed (or cut off) between the two leaves the original unacked,
 * and its redelivery is dead-lettered again. With this id the stream stores the second one as the
 * duplicate it is (within its duplicate window, 2 minutes by default), so a message is
 * dead-lettered once. A message redriven is stored again under a new sequence: a new id.
 */
function deadLetterMsgId(message: OutgoingMessage<NatsPublishOptions>): string | undefined {
  const cause = message.cause?.position;
  if (message.deadLetterOrigin === undefined || !(cause instanceof JetStreamPosition)) {
    return undefined;
  }
  return `ruststream-dlq:${cause.consumer ?? ""}:${cause.stream}:${cause.sequence}`;
}

/**
 * The JetStream headers a publish's options stand for, spelled as the server reads them; a given
 * `msgId` wins over `defaultMsgId`. `subject`: where the message is published.
 */
function optionLines(
  options: NatsPublishOptions | undefined,
  subject: string,
  defaultMsgId?: string,
): [string, string][] {
  const { msgId = defaultMsgId, expect, ttlMs, schedule } = options ?? {};
  const lines: [string, string][] = [];
  const add = (name: string, value: string | bigint | number | undefined) => {
    if (value === undefined) return;
    const text = String(value);
    if (text === "" || /[\r\n]/.test(text) || text.trim() !== text) {
      throw new RustStreamError(
        "invalid-argument",
        `${name}: ${JSON.stringify(text)} cannot be a NATS header value (non-empty text on one line)`,
      );
    }
    lines.push([name, text]);
  };
  add(jetStreamHeaders.msgId, msgId);
  add(jetStreamHeaders.expectedStream, expect?.stream);
  add(jetStreamHeaders.expectedLastSequence, expect?.lastSequence);
  add(jetStreamHeaders.expectedLastSubjectSequence, expect?.lastSubjectSequence);
  add(jetStreamHeaders.expectedLastMsgId, expect?.lastMsgId);
  // `Nats-TTL` carries whole seconds, or `never`.
  add(
    jetStreamHeaders.ttl,
    ttlMs === undefined || ttlMs === "never" ? ttlMs : wholeSeconds(ttlMs, 'ttlMs (or "never")'),
  );
  if (schedule !== undefined) lines.push(...scheduleLines(schedule, subject));
  return lines;
}
