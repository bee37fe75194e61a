import { runtimeName } from "@ruststream/core/broker";

/**
 * Imports `specifier` (a file URL, or a package name looked up from `parentUrl`) with TypeScript
 * running as it is. On Node and Deno through tsx's `tsImport`, scoped to this import's graph (no
 * loader registered for the whole process). Bun runs TypeScript itself and does not apply the
 * module hooks tsx rests on (it took tsx's `tsx://` namespace for a package name and failed), so
 * there the module is imported directly, a package name resolved from `parentUrl` first.
 */
export async function importFrom(specifier: string, parentUrl: string): Promise<unknown> {
  if (runtimeName() === "bun") {
    return import(
      specifier.startsWith("file:") ? specifier : import.meta.resolve(specifier, parentUrl)
    );
  }
  // Loaded only where it is used: Bun never needs it.
  const { tsImport } = await import("tsx/esm/api");
  return tsImport(specifier, parentUrl);
}
