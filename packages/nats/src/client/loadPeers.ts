import { RustStreamError } from "@ruststream/core";

// @nats-io/kv and @nats-io/obj are optional peer dependencies: a service installs one only to
// declare KV buckets, or to use object stores, and nothing loads either until then. A missing one
// is named with the fix, instead of surfacing as a bare module-not-found from inside a subscribe.

/** Imports an optional peer through `importer`, or says what to install and what else to do. */
async function loadPeer<T>(
  name: string,
  use: string,
  otherwise: string,
  importer: () => Promise<T>,
): Promise<T> {
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
        `${use} needs the package ${name}, which is not installed: install it (npm install ${name})${otherwise}`,
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

/**
 * The KV client's module. `importer` is the `import()` itself, written at the call site so a
 * bundler sees a literal specifier.
 */
export function loadKv(
  importer: () => Promise<typeof import("@nats-io/kv")> = () => import("@nats-io/kv"),
): Promise<typeof import("@nats-io/kv")> {
  return loadPeer(
    "@nats-io/kv",
    "declaring a KV bucket",
    ", or create the bucket beforehand (nats kv add <bucket>) and leave out declare",
    importer,
  );
}

/** The object store client's module, as `loadKv`. */
export function loadObj(
  importer: () => Promise<typeof import("@nats-io/obj")> = () => import("@nats-io/obj"),
): Promise<typeof import("@nats-io/obj")> {
  return loadPeer("@nats-io/obj", "an object store", "", importer);
}
