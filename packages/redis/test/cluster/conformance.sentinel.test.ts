import { sentinelOptions } from "./env.js";
import { conformanceOn } from "./suites.js";

// Every transport's conformance suites against the master the sentinels name.
conformanceOn(sentinelOptions);
