// The core NATS scenario, kept apart from the catalog's list: a queue group on a plain subject.
import { NATS_CORE_IN_FLIGHT } from "./natsCoreRequests.js";
import type { Scenario } from "./scenario.js";

export const natsCoreRequest: Scenario = {
  name: "nats-core-request",
  description:
    "a core NATS subject read by two replicas in one queue group through the fault proxy, the load sent as requests, each again until its reply came: cut, stall, latency, and SIGKILL of a replica; core NATS loses what is in flight, so what is checked is end to end: every message handled and answered, none handled more often than it was sent (by the publisher, or republished by the runtime), every reply its own request's",
  broker: "nats-core",
  replicas: 2,
  faults: ["cut", "stall", "latency", "kill"],
  // A queue group hands a key's messages to either member, and a request sent again comes after
  // later ones of its key.
  orderPerKey: false,
  inFlightPerReplica: NATS_CORE_IN_FLIGHT,
  ci: true,
};
