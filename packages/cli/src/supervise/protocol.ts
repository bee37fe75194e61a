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

/**
 * Sends `message` if the supervisor is still there. It can die between the check and the write (the
 * channel's end is only seen on a later turn): the send then fails with EPIPE, which without a
 * callback would be an 'error' on the process and kill the service before it drains. With one, the
 * failure is dropped, and the channel's end stops the service as "supervisor gone".
 */
export function notifySupervisor(message: ChildMessage): void {
  if (supervised() && process.connected) process.send?.(message, undefined, undefined, () => {});
}

export function isChildMessage(value: unknown): value is ChildMessage {
  return (
    typeof value === "object" && value !== null && (value as { type?: unknown }).type === "ready"
  );
}
