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

/**
 * An error a module threw while it loaded, as a person needs it: the message (for a syntax error it
 * holds the file, line and column) and the stack frames in the service's own code, without the
 * loader's, the CLI's and Node's.
 */
export function describeLoadError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const lines = (error.stack ?? "").split("\n");
  const frames = lines.filter((line) => /^\s+at /.test(line));
  const header =
    lines.filter((line) => !/^\s+at /.test(line)).join("\n") || `${error.name}: ${error.message}`;
  const kept = frames.filter((frame) => !isNoise(frame));
  return kept.length === 0 ? header : `${header}\n${kept.join("\n")}`;
}
