import { fileURLToPath } from "node:url";

// The CLI's own files (src/ when run from source, dist/ when built): frames in them say nothing
// about the service's failure.
const cliRoot = fileURLToPath(new URL("..", import.meta.url));
const ownFrames = [`${cliRoot}src/`, `${cliRoot}dist/`];

function isNoise(frame: string): boolean {
  return (
    /\(node:|at (?:async )?node:/.test(frame) ||
    frame.includes("/node_modules/") ||
    ownFrames.some((own) => frame.includes(own))
  );
}

/** Where a build message points: Bun's `position` on a syntax error. */
interface BuildPosition {
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
}

/**
 * Bun reports a module that does not compile as an AggregateError ("2 errors building <file>")
 * whose own message says no more: each of its errors holds one message and its position, written
 * here the way tsx writes a syntax error on Node (`file:line:column: ERROR: message`).
 */
function buildMessages(error: Error): string[] {
  if (!(error instanceof AggregateError)) return [];
  return error.errors.flatMap((each: unknown) => {
    if (typeof each !== "object" || each === null) return [];
    const { message, position } = each as { message?: unknown; position?: BuildPosition | null };
    if (typeof message !== "string") return [];
    const at =
      position?.file === undefined ? "" : `${position.file}:${position.line}:${position.column}: `;
    return [`${at}ERROR: ${message}`];
  });
}

/**
 * An error a module threw while it loaded, as a person needs it: the message (for a syntax error it
 * holds the file, line and column, or on Bun the build messages after it) and the stack frames in the service's own code, without the
 * loader's, the CLI's and Node's.
 */
export function describeLoadError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const lines = (error.stack ?? "").split("\n");
  const frames = lines.filter((line) => /^\s+at /.test(line));
  const header =
    lines.filter((line) => !/^\s+at /.test(line)).join("\n") || `${error.name}: ${error.message}`;
  const kept = [...buildMessages(error), ...frames.filter((frame) => !isNoise(frame))];
  return kept.length === 0 ? header : `${header}\n${kept.join("\n")}`;
}
