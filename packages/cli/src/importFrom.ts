import { fileURLToPath, pathToFileURL } from "node:url";
import { runtimeName } from "@ruststream/core/broker";

/** Bun's own resolver, the one its `import` uses (ESM conditions). */
interface BunResolver {
  resolveSync(specifier: string, parent: string): string;
}

/**
 * Imports `specifier` (a file URL, or a package name looked up from `parentUrl`) with TypeScript
 * running as it is. On Node and Deno through tsx's `tsImport`, scoped to this import's graph (no
 * loader registered for the whole process). Bun runs TypeScript itself and does not apply the
 * module hooks tsx rests on (it took tsx's `tsx://` namespace for a package name and failed), so
 * there the module is imported directly, a package name resolved from `parentUrl` first.
 */
export async function importFrom(specifier: string, parentUrl: string): Promise<unknown> {
  if (runtimeName() === "bun") {
    if (specifier.startsWith("file:")) return import(specifier);
    // Not `import.meta.resolve`: this file is built to CommonJS too, where `import.meta` does not
    // parse (the CommonJS entry failed to load on every runtime).
    const bun = (globalThis as { Bun?: BunResolver }).Bun as BunResolver;
    return import(pathToFileURL(bun.resolveSync(specifier, fileURLToPath(parentUrl))).href);
  }
  // Loaded only where it is used: Bun never needs it.
  const { tsImport } = await import("tsx/esm/api");
  return tsImport(specifier, parentUrl);
}
