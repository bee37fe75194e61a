// What a scenario declares: the broker and mode under test, its replicas, the faults it suffers and
// what its mode promises.
import type { NetworkFault } from "../faults/toxiproxy.js";
import type { RetryPlan, ServiceConfig } from "../service/config.js";

/** Faults of a stream file's own (see fileTargets.ts). */
export type FileFault = "disk-full" | "truncate";

/** `leader-kill`: a node of a broker cluster leading a partition of the scenario's topic, killed. */
export type FaultKind = "kill" | "broker-restart" | "leader-kill" | NetworkFault | FileFault;

export interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly broker: ServiceConfig["broker"];
  /** Service processes at once (more than one only where the broker has groups). */
  readonly replicas: number;
  readonly faults: readonly FaultKind[];
  /**
   * Every replica subscribes on its own and is given every message (core NATS without a queue
   * group): the checker runs per replica, each replica's losses and duplicates summed.
   */
  readonly fanOut?: true;
  /** Whether the mode promises order per key (checked: reordered must be 0). */
  readonly orderPerKey: boolean;
  /** Deliveries one replica may hold unsettled: what one fault may make it handle twice. */
  readonly inFlightPerReplica: number;
  /** The retry plan; its dead letter is named after the run's stream key. */
  readonly retry?: Omit<RetryPlan, "deadLetter">;
  /**
   * Dead letters the package documents as at least once (a fault between a dead letter's confirm
   * and its original's ack brings the original back, past its cap, to be dead-lettered again):
   * what one replica may hold unacked, the most one fault may make come twice. Else none may.
   */
  readonly deadLettersTwicePerFault?: number;
  /**
   * The cap counts the handler's runs only (the retry count a copy carries), so no fault spends an
   * attempt, and a dead letter of a message the plan never fails is a failure. Else (a server that
   * counts deliveries, a kill's or a cut's among them) such dead letters are only noted.
   */
  readonly capCountsHandlerRunsOnly?: boolean;
  /** A PostgreSQL queue's `keyOrder`, where it differs from the default (on without a retry plan). */
  readonly keyOrder?: boolean;
  /**
   * A PostgreSQL queue's `transactional`: each handling writes a business row in the claim's
   * transaction; the business rows are read back as the outputs (exactly once, one per acked row).
   */
  readonly transactional?: boolean;
  /** In the CI profile (a scenario left out says why). */
  readonly ci: true | string;
}
