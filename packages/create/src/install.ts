import { spawn } from "node:child_process";
import { CreateError } from "./createError.js";

export type PackageManager = "npm" | "pnpm" | "yarn" | "bun";

/** The package manager that ran this command (`npm init`, `pnpm create`, ...), from its user agent. */
export function packageManagerOf(userAgent: string | undefined): PackageManager {
  const name = userAgent?.split("/")[0];
  return name === "pnpm" || name === "yarn" || name === "bun" ? name : "npm";
}

/**
 * Installs the project's dependencies with `manager`, its output shown as it goes. The registry is
 * the one the manager is configured with (the environment npm passed on included), the one that
 * served this package.
 */
export function install(directory: string, manager: PackageManager): Promise<void> {
  return new Promise((resolve, reject) => {
    // npm, pnpm and yarn are .cmd scripts on Windows, which only a shell runs.
    const child = spawn(manager, ["install"], {
      cwd: directory,
      stdio: "inherit",
      shell: process.platform === "win32",
    });
    const failed = (what: string) =>
      new CreateError(
        `${manager} install in ${directory} ${what}: read its output above, then run \`${manager} install\` there yourself (the files are written)`,
      );
    child.on("error", (error) => reject(failed(`could not start (${error.message})`)));
    child.on("exit", (code, signal) => {
      if (code === 0) resolve();
      else reject(failed(signal === null ? `exited with ${code}` : `was stopped by ${signal}`));
    });
  });
}
