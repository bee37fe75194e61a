/**
 * How a broker's stored consumer position follows settlement. Core only names the modes; a broker's
 * descriptor accepts the ones its broker has, and its README says what each means there.
 *
 * - `auto`: the client commits on its own schedule; ack is advisory and a requeue is `unsupported`.
 * - `tracked`: precise at-least-once. The stored position advances only over deliveries settled
 *   without a gap, so out-of-order settlement under concurrent lanes never skips an unsettled one.
 * - `transactional`: the position is committed inside the transaction that publishes the results.
 */
export type CommitMode = "auto" | "tracked" | "transactional";

/** Every commit mode, for validating configuration read from outside the program. */
export const commitModes: readonly CommitMode[] = ["auto", "tracked", "transactional"];
