import { RustStreamError } from "@ruststream/core";
import { checkSubject } from "./names.js";

/**
 * A durable push consumer the server made (`nats consumer add --target ...`), or one a
 * subscription creates when it is missing: the subject the server pushes its messages to, and the
 * rest of its push settings.
 */
export interface PushDeclaration {
  /**
   * The subject the server pushes the consumer's messages to (`deliver_subject`). Required for a
   * durable: the consumer outlives the app, and every app bound to it listens on this subject.
   */
  readonly deliverSubject: string;
  /** A queue group on that subject: each message goes to one of the apps in it (`deliver_group`). */
  readonly deliverGroup?: string;
  /** The server sends a heartbeat when it has had nothing to push for this long (`idle_heartbeat`). */
  readonly idleHeartbeatMs?: number;
  /** The server waits for the app's answer to its flow control messages (`flow_control`); needs `idleHeartbeatMs`. */
  readonly flowControl?: boolean;
}

/**
 * An ephemeral push consumer's declaration (a subject without `durable`): the subscription's own,
 * so its deliver subject is by default a fresh inbox of the connection, made at each creation
 * (nothing else listens there); no deliver group (one shares a durable's messages).
 */
export interface EphemeralPushDeclaration {
  /** The subject the server pushes to (default: a fresh inbox); nothing else may listen on it. */
  readonly deliverSubject?: string;
  readonly deliverGroup?: never;
  readonly idleHeartbeatMs?: number;
  readonly flowControl?: boolean;
}

/**
 * How a subscription with `durable` binds to a push consumer: `true` to an existing durable push
 * consumer only; `{ declare }` to it, creating it with these settings when it is missing.
 */
export type PushBinding = true | { readonly declare: PushDeclaration };

/** How a subscription without `durable` makes an ephemeral push consumer of its own. */
export interface EphemeralPushBinding {
  readonly declare: EphemeralPushDeclaration;
}

/**
 * The push binding as checked: `"bind"` (existing only), or the declaration to create from (no
 * `deliverSubject` for an ephemeral one given none: the link makes an inbox at each creation).
 */
export type PushSettings = "bind" | EphemeralPushDeclaration | PushDeclaration;

/** Checks a JetStreamSubject's `push` option against its `durable` and `priority`. */
export function checkPush(
  push: PushBinding | EphemeralPushBinding | undefined,
  durable: string | undefined,
  priority: unknown,
): PushSettings | undefined {
  if (push === undefined) return undefined;
  if (push === true && durable === undefined) {
    throw new RustStreamError(
      "invalid-argument",
      "JetStreamSubject push: true binds to an existing push consumer by its name: give durable (the consumer's name at the server), or push: { declare } for an ephemeral one",
    );
  }
  if (priority !== undefined) {
    throw new RustStreamError(
      "invalid-argument",
      "JetStreamSubject push: priority groups are a pull consumer's (the server takes none on a push consumer): drop priority or push",
    );
  }
  if (push === true) return "bind";
  if (typeof push !== "object" || push === null || typeof push.declare !== "object") {
    throw new RustStreamError(
      "invalid-argument",
      "JetStreamSubject push: give true (bind to an existing push consumer) or { declare: { deliverSubject, deliverGroup?, idleHeartbeatMs?, flowControl? } }",
    );
  }
  const d: EphemeralPushDeclaration | PushDeclaration = push.declare;
  // A durable's deliver subject is where every app bound to it listens, and outlives this one: it
  // is the team's to name. An ephemeral one's is the subscription's own: an inbox by default.
  if (d.deliverSubject === undefined && durable !== undefined) {
    throw new RustStreamError(
      "invalid-argument",
      `JetStreamSubject push deliverSubject: the durable push consumer "${durable}" needs a deliver subject (the apps bound to it listen there, by that subject): give push: { declare: { deliverSubject } }, or drop durable for an ephemeral one on an inbox of its own`,
    );
  }
  if (d.deliverSubject !== undefined) checkDeliverSubject(d.deliverSubject);
  if (d.deliverGroup !== undefined && !/^[^\s.*>]+$/.test(d.deliverGroup)) {
    throw new RustStreamError(
      "invalid-argument",
      `JetStreamSubject push deliverGroup: ${JSON.stringify(d.deliverGroup)} is not a queue group name (no spaces, dots, *, >)`,
    );
  }
  // The server takes a deliver group on an ephemeral, but nothing can bind to one by name: each
  // app's ephemeral pushes every message to the group, so the apps would each get them all.
  if (d.deliverGroup !== undefined && durable === undefined) {
    throw new RustStreamError(
      "invalid-argument",
      "JetStreamSubject push deliverGroup: a deliver group shares a durable push consumer's messages between the apps bound to it, and an ephemeral one is a single subscription's: give durable to share, or drop deliverGroup",
    );
  }
  if (
    d.idleHeartbeatMs !== undefined &&
    (!Number.isSafeInteger(d.idleHeartbeatMs) || d.idleHeartbeatMs < 100)
  ) {
    throw new RustStreamError(
      "invalid-argument",
      `JetStreamSubject push idleHeartbeatMs: ${String(d.idleHeartbeatMs)} is not a whole number of milliseconds, 100 or more`,
    );
  }
  if (d.flowControl === true && d.idleHeartbeatMs === undefined) {
    throw new RustStreamError(
      "invalid-argument",
      "JetStreamSubject push flowControl: the server takes flow control only with heartbeats: give idleHeartbeatMs too",
    );
  }
  return { ...d };
}

/** A deliver subject given: one subject, no wildcard (the server pushes to one). */
function checkDeliverSubject(subject: string): void {
  checkSubject(subject, "JetStreamSubject push deliverSubject");
  if (/[*>]/.test(subject)) {
    throw new RustStreamError(
      "invalid-argument",
      `JetStreamSubject push deliverSubject: "${subject}" has a wildcard: the server pushes to one subject`,
    );
  }
}

/** The push consumer `push: true` binds to is not there. */
export function pushConsumerMissing(stream: string, durable: string): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `the push consumer "${durable}" does not exist on the JetStream stream "${stream}": create it (nats consumer add ${stream} ${durable} --target <deliver subject>), or let the subscription create it with push: { declare: { deliverSubject } }`,
  );
}

/**
 * A consumer bound as the kind it is not: a pull consumer with `push`, or a push consumer without
 * it. The server's own answer says only that the consumer exists with other settings.
 */
export function wrongConsumerKind(
  stream: string,
  durable: string,
  existingIsPush: boolean,
  cause?: unknown,
): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    existingIsPush
      ? `the consumer "${durable}" on the JetStream stream "${stream}" is a push consumer (it has a deliver subject): bind to it with the JetStreamSubject option push: true`
      : `the consumer "${durable}" on the JetStream stream "${stream}" is a pull consumer (no deliver subject): bind to it without the JetStreamSubject option push`,
    { cause },
  );
}

/**
 * A push consumer whose settlement the subscription cannot keep to: it is settled as the pull
 * consumers are (explicit acks, a `working()` beat every half ack wait), so it needs explicit acks
 * and the ack wait the subscription beats to.
 */
export function pushConsumerUnfit(
  stream: string,
  durable: string,
  ackPolicy: string,
  ackWaitMs: number,
  expectedAckWaitMs: number,
): RustStreamError | undefined {
  if (ackPolicy !== "explicit") {
    return new RustStreamError(
      "invalid-argument",
      `the push consumer "${durable}" on the JetStream stream "${stream}" has the ack policy "${ackPolicy}": a subscription settles each message, so it needs "explicit" (nats consumer edit cannot change it: create the consumer again with --ack explicit)`,
    );
  }
  if (ackWaitMs !== expectedAckWaitMs) {
    return new RustStreamError(
      "invalid-argument",
      `the push consumer "${durable}" on the JetStream stream "${stream}" has an ack wait of ${ackWaitMs} ms and the subscription gives ${expectedAckWaitMs}: give ackWaitMs: ${ackWaitMs}, so a slow handler is kept alive in time`,
    );
  }
  return undefined;
}

/**
 * A push consumer without a deliver group that another app (or connection) is bound to already;
 * for an ephemeral one (`durable` undefined), something else listens on the deliver subject it
 * was given.
 */
export function pushConsumerTaken(
  stream: string,
  durable: string | undefined,
  deliverSubject: string,
): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    durable === undefined
      ? `an ephemeral push consumer on the JetStream stream "${stream}" would push to "${deliverSubject}", where something listens already (another app's push consumer?): give each subscription a deliver subject of its own, or none (an inbox of its own)`
      : `the push consumer "${durable}" on the JetStream stream "${stream}" is bound already (something listens on its deliver subject "${deliverSubject}") and has no deliver group: to share its messages between apps, give it one (push: { declare: { deliverGroup } } on a new consumer, or nats consumer add --deliver-group)`,
  );
}

/** A seek on a subscription bound with `push: true`: the consumer is the team's, as the server has it. */
export function pushSeekRefused(stream: string, durable: string): RustStreamError {
  return new RustStreamError(
    "unsupported",
    `seek() on the push consumer "${durable}" of the JetStream stream "${stream}", bound with push: true: a seek creates the consumer again at the position, and one bound to as the server has it is not this app's to delete and remake; declare it (push: { declare }) to seek, or move it at the server (nats consumer rm, then add with --deliver)`,
  );
}
