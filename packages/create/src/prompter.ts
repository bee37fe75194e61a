import { createInterface } from "node:readline/promises";
import type { Prompter } from "./choices.js";

/** Questions on a terminal; `close()` once the last is answered, so the process can exit. */
export function terminalPrompter(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Prompter & { close(): void } {
  const lines = createInterface({ input, output });
  return {
    async ask(question, fallback) {
      const hint = fallback === "" ? "" : ` (${fallback})`;
      const answer = (await lines.question(`${question}${hint}: `)).trim();
      return answer === "" ? fallback : answer;
    },
    tell(line) {
      output.write(`${line}\n`);
    },
    close() {
      lines.close();
    },
  };
}
