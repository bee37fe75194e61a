import { ensureBrokers } from "../src/index.mjs";

// The smoke tests need every broker this tool runs. RUSTSTREAM_BROKERS narrows the set (e.g. to
// "redis,kafka" where Pulsar cannot run); the tests of a broker left out then fail, they never skip.
// ensureBrokers exports the addresses into process.env, which the test workers inherit.
export default async function setup(): Promise<void> {
  const names = (process.env.RUSTSTREAM_BROKERS ?? "all").split(",").filter(Boolean);
  await ensureBrokers(names);
}
