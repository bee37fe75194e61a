// @ts-check
// Placeholder until the kafka runner lands; see registry.mjs for the shape.
export const name = "kafka";
/** @param {(line: string) => void} _log */
export async function up(_log) {
  throw new Error("kafka: not implemented yet");
}
/** @param {(line: string) => void} _log */
export async function down(_log) {
  return false;
}
export async function status() {
  return [];
}
export function env() {
  return {};
}
