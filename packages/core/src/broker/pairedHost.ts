import { RustStreamError } from "../errors.js";
import { brokerKind } from "./contract.js";

/** The broker a publish policy belongs to, named in the error when it is paired elsewhere. */
export interface PolicyOwner {
  /** The broker's kind, its `brokerMark`: `"redis"`. */
  readonly kind: string;
  /** The broker's name in messages: `"Redis"`. */
  readonly label: string;
  /** The broker's class, to connect instead: `"RedisBroker"`. */
  readonly broker: string;
}

/**
 * The connection a publish policy's `pair(connected)` was given, as the host the policy needs:
 * recognised by its brand and the one method the policy calls, never by class, so a policy
 * imports no connection (and there is no cycle). Another broker's connection, or an object that
 * only looks like one, fails `foreign-value` naming the fix.
 */
export function pairedHost<THost extends object>(
  connected: object,
  owner: PolicyOwner,
  method: keyof THost & string,
): THost {
  const kind = brokerKind(connected);
  if (kind !== owner.kind || typeof (connected as Record<string, unknown>)[method] !== "function") {
    throw new RustStreamError(
      "foreign-value",
      `a ${owner.label} publish policy cannot pair with a "${String(kind)}" connection: use that broker's own policy, or pair this one with a connected ${owner.broker}`,
    );
  }
  // The brand and the method are how a host is recognised: a value carrying both is one.
  return connected as THost;
}
