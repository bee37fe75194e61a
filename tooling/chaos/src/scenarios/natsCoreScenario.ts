// The core NATS scenarios, kept apart from the catalog's list: a queue group on a plain subject.
import { NATS_CORE_IN_FLIGHT } from "./natsCoreRequests.js";
import type { Scenario } from "./scenario.js";

export const natsCoreRequest: Scenario = {
  name: "nats-core-request",
  description:
    "a core NATS subject read by two replicas in one queue group through the fault proxy, the load sent as requests, each again until its reply came: cut, stall, latency, and SIGKILL of a replica; core NATS loses what is in flight, so what is checked is end to end: every message handled and answered, none handled more often than it was sent (by the publisher, or republished by the runtime), every reply its own request's",
  broker: "nats-core-request",
  replicas: 2,
  faults: ["cut", "stall", "latency", "kill"],
  // A queue group hands a key's messages to either member, and a request sent again comes after
  // later ones of its key.
  orderPerKey: false,
  inFlightPerReplica: NATS_CORE_IN_FLIGHT,
  ci: true,
};

export const natsCorePublish: Scenario = {
  name: "nats-core-publish",
  description:
    "a core NATS subject read by two replicas in one queue group through the fault proxy, the load published fire and forget: cut, stall, latency, and SIGKILL of a replica; before each fault the load is held until everything sent was handled, and what is published from the fault's start until every replica answers its probe after the heal may be lost (core NATS's at most once, counted apart); every other message handled, none more often than it was sent",
  broker: "nats-core-publish",
  replicas: 2,
  faults: ["cut", "stall", "latency", "kill"],
  orderPerKey: false,
  // Core NATS hands a publish to one member at most once and the handler never fails: a duplicate
  // can only be a publish the runner sent again (a flush unanswered in 5 s), which the verdict
  // holds to its sends.
  inFlightPerReplica: 1,
  ci: true,
};

export const natsCoreFanout: Scenario = {
  name: "nats-core-fanout",
  description:
    "a core NATS subject read by two replicas each subscribed on its own (no queue group: each given every message) through the fault proxy, the load published fire and forget: cut, stall, latency, and SIGKILL of a replica; before each fault the load is held until every replica handled everything sent, and what is published from the fault's start until every replica answers its probe after the heal is exposed for the replicas the fault reaches (every replica for a fault through the proxy, the killed one for a kill): each replica handled every message published outside its own exposure, none more often than it was sent",
  broker: "nats-core-fanout",
  replicas: 2,
  faults: ["cut", "stall", "latency", "kill"],
  fanOut: true,
  // Not checked here (the nats package's Not done yet): a publish the runner sends again would come
  // after later ones of its key.
  orderPerKey: false,
  // Each replica is handed a publish at most once by its subscription and the handler never fails:
  // a duplicate can only be a publish the runner sent again, which the verdict holds to its sends.
  inFlightPerReplica: 1,
  ci: true,
};
