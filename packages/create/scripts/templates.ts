import { cp, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brokerNames } from "../src/brokers.js";

const packageRoot = fileURLToPath(new URL("../", import.meta.url));
const examples = join(packageRoot, "..", "..", "examples");

/**
 * Of each broker's example, what a new project takes: its app, its main, its in-process test and
 * its package.json (rewritten when a project is written). Its live test and its README stay: they
 * speak of the repository.
 */
export const exampleFiles = ["package.json", "src/app.ts", "src/main.ts", "test/app.test.ts"];

/**
 * Fills `out` (default the package's templates/) with common/ and, per broker, the files above of
 * examples/<broker>: the examples are the templates, so the two can never drift apart.
 */
export async function assembleTemplates(out = join(packageRoot, "templates")): Promise<string> {
  await rm(out, { recursive: true, force: true });
  await cp(join(packageRoot, "common"), join(out, "common"), { recursive: true });
  for (const broker of brokerNames) {
    for (const file of exampleFiles) {
      await mkdir(join(out, broker, file, ".."), { recursive: true });
      await cp(join(examples, broker, file), join(out, broker, file));
    }
  }
  return out;
}
