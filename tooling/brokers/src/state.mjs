// @ts-check
// Where broker state lives: a per-user folder outside any clone, so that a fresh clone (CI's, or a
// second checkout) sees the brokers another clone started and the same jars and data.
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The root state folder: $RUSTSTREAM_BROKERS_STATE, else $XDG_STATE_HOME/ruststream-brokers. */
export function stateRoot() {
  const explicit = process.env.RUSTSTREAM_BROKERS_STATE;
  if (explicit) return explicit;
  const xdg = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(xdg, "ruststream-brokers");
}

/**
 * The state folder of one broker (or one instance), created on demand.
 * @param {...string} parts
 */
export function stateDir(...parts) {
  const dir = join(stateRoot(), ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * A port from the environment, or its default.
 * @param {string} name environment variable
 * @param {number} fallback
 */
export function envPort(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(
      `${name}=${raw} is not a TCP port: set it to a whole number between 1 and 65535`,
    );
  }
  return port;
}
