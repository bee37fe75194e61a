// What a supervisor (`--watch`, `--workers`) and the `ruststream run` processes it starts say to
// each other: an environment variable marks a supervised child, and the child reports over the IPC
// channel its parent opened.

/** Set to "1" in a supervised child's environment. */
export const supervisedEnv = "RUSTSTREAM_SUPERVISED";
/** The worker's number, 1 to N, in a `--workers` child's environment (for the service, too). */
export const workerEnv = "RUSTSTREAM_WORKER";

/** A child's report to its supervisor. */
export interface ChildMessage {
  /** The app is started: every subscription open. */
  readonly type: "ready";
}

/** Whether this process runs under a supervisor that talks to it over IPC. */
export function supervised(): boolean {
  return process.env[supervisedEnv] === "1" && typeof process.send === "function";
}

export function notifySupervisor(message: ChildMessage): void {
  if (supervised() && process.connected) process.send?.(message);
}

export function isChildMessage(value: unknown): value is ChildMessage {
  return (
    typeof value === "object" && value !== null && (value as { type?: unknown }).type === "ready"
  );
}
