import { relative } from "node:path";
import { parseCreateArgs } from "./args.js";
import { type Prompter, resolveChoices } from "./choices.js";
import { CreateError } from "./createError.js";
import { install, type PackageManager, packageManagerOf } from "./install.js";
import { ownVersion, templatesDirectory } from "./ownPackage.js";
import { terminalPrompter } from "./prompter.js";
import { usage } from "./usage.js";
import { writeProject } from "./writeProject.js";

export interface CreateIo {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where the templates are (default: this package's). */
  readonly templates?: string;
  /** Installs the dependencies (default: the package manager that ran this command). */
  readonly install?: (directory: string, manager: PackageManager) => Promise<void>;
}

/** `create-ruststream <argv>`: answers the exit code (0, 1 a failure, 2 a wrong command line). */
export async function main(argv: readonly string[], io: CreateIo): Promise<0 | 1 | 2> {
  let prompter: (Prompter & { close(): void }) | undefined;
  try {
    const flags = parseCreateArgs(argv);
    if (flags.help) {
      io.stdout.write(usage);
      return 0;
    }
    const version = ownVersion();
    if (flags.version) {
      io.stdout.write(`${version}\n`);
      return 0;
    }
    prompter = io.stdin.isTTY === true ? terminalPrompter(io.stdin, io.stdout) : undefined;
    const choices = await resolveChoices(flags, io.cwd, prompter);
    prompter?.close();
    prompter = undefined;
    const written = await writeProject(choices, version, io.templates ?? templatesDirectory());
    const where = relative(io.cwd, choices.directory) || ".";
    const engine = choices.engine === undefined ? "" : ` (${choices.engine})`;
    io.stdout.write(
      `Wrote ${choices.name}, a RustStream service on ${choices.broker}${engine}, in ${where}: ${written.join(", ")}\n`,
    );
    const manager = packageManagerOf(io.env.npm_config_user_agent);
    if (flags.install) {
      io.stdout.write(`Installing its dependencies with ${manager}...\n`);
      await (io.install ?? install)(choices.directory, manager);
    }
    const steps = [`cd ${where}`, ...(flags.install ? [] : [`${manager} install`])];
    io.stdout.write(
      `\nNext:\n${[...steps, `${manager} test`, `${manager} start`].map((s) => `  ${s}`).join("\n")}\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof CreateError)) throw error;
    io.stderr.write(`create-ruststream: ${error.message}\n`);
    return error.exitCode;
  } finally {
    prompter?.close();
  }
}
