import { RustStreamError } from "@ruststream/core";

// @nats-io/kv is an optional peer dependency: a service installs it only to declare KV buckets,
// and nothing loads it until one is declared. A missing one is named with the fix, instead of
// surfacing as a bare module-not-found from inside a subscribe.

const name = "@nats-io/kv";

/**
 * The KV client's module, or a RustStreamError saying what to install. `importer` is the
 * `import()` itself, written at the call site so a bundler sees a literal specifier.
 */
export async function loadKv(
  importer: () => Promise<typeof import("@nats-io/kv")> = () => import("@nats-io/kv"),
): Promise<typeof import("@nats-io/kv")> {
  try {
    return await importer();
  } catch (error) {
    const code = (error as { code?: unknown } | undefined)?.code;
    if (
      (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
      String((error as Error).message).includes(name)
    ) {
      throw new RustStreamError(
        "unsupported",
        `declaring a KV bucket needs the package ${name}, which is not installed: install it (npm install ${name}), or create the bucket beforehand (nats kv add <bucket>) and leave out declare`,
        { cause: error },
      );
    }
    throw new RustStreamError(
      "broker-failure",
      `could not load ${name}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}
