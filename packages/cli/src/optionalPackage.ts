import { CliError } from "./cliError.js";
import { importFrom } from "./importFrom.js";

/**
 * Whether `error` says `name` itself could not be found (not some dependency inside it): an ES
 * module lookup's `ERR_MODULE_NOT_FOUND`, or on Deno, which looks it up with `require.resolve`,
 * `MODULE_NOT_FOUND`.
 */
function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    String((error as Error).message).includes(`'${name}'`)
  );
}

/**
 * Imports one of the CLI's optional packages (`@ruststream/metrics`, `@ruststream/asyncapi`): the
 * service's own copy, looked up from its module, else one installed beside the CLI. They are
 * optional because they bring large dependencies (prom-client; the AsyncAPI parser and React
 * viewer) that a service which never asks for them should not install, and the service's copy comes
 * first because it is the one the service may use itself.
 */
export async function optionalPackage<T>(
  name: string,
  moduleUrl: string,
  purpose: string,
): Promise<T> {
  for (const parent of [moduleUrl, import.meta.url]) {
    try {
      return (await importFrom(name, parent)) as T;
    } catch (error) {
      if (!isMissing(error, name)) throw error;
    }
  }
  throw new CliError(
    `${purpose} needs ${name}, which neither the service nor the CLI has: run \`npm install ${name}\` in the service's folder (looked it up from ${new URL(moduleUrl).pathname})`,
  );
}
