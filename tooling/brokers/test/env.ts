// Live tests read the addresses the global setup exported. A missing one means the broker was not
// started: the test fails with the fix rather than skipping.
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new Error(
      `${name} is not set: the brokers global setup did not start this broker (check RUSTSTREAM_BROKERS, or run \`pnpm brokers up\`)`,
    );
  }
  return value;
}
