import { dropKafkajsNegativeTimeoutWarning } from "../src/index.mjs";

// kafkajs warns on Node 23 and later of a negative timeout it schedules, harmlessly (the Kafka
// package's README, "kafkajs on Node 24"): dropped here, that warning alone, so a warning of ours
// stands out.
dropKafkajsNegativeTimeoutWarning();
