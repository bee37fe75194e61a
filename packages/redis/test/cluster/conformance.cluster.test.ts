import { clusterOptions } from "./env.js";
import { conformanceOn } from "./suites.js";

// Every transport's conformance suites against the six-node Redis Cluster (sharded Pub/Sub, the
// default on Redis 7.0).
conformanceOn(clusterOptions);
