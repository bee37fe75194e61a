import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runtimeName } from "@ruststream/core/broker";

/** Bun's own resolver, the one its `import` uses (ESM conditions). */
interface BunResolver {
  resolveSync(specifier: string, parent: string): string;
}

/**
 * The file a package name resolves to from `parentUrl`, by the runtime's own resolver: Bun's (ESM
 * conditions); on Deno, `require.resolve` from the parent, which applies the `--conditions` Deno
 * was started with (Deno offers no ESM resolution from another module), so a built package comes
 * as its CommonJS entry there.
 */
function resolvePackage(runtime: "bun" | "deno", specifier: string, parentUrl: string): string {
  if (runtime === "bun") {
    // Not `import.meta.resolve`: this file is built to CommonJS too, where `import.meta` does not
    // parse (the CommonJS entry failed to load on every runtime).
    const bun = (globalThis as { Bun?: BunResolver }).Bun as BunResolver;
    return bun.resolveSync(specifier, fileURLToPath(parentUrl));
  }
  return createRequire(parentUrl).resolve(specifier);
}

/**
 * Imports `specifier` (a file URL, or a package name looked up from `parentUrl`) with TypeScript
 * running as it is. On Node through tsx's `tsImport`, scoped to this import's graph (no loader
 * registered for the whole process). Bun and Deno run TypeScript themselves and do not apply the
 * module hooks tsx rests on (Bun took tsx's `tsx://` namespace for a package name and failed; Deno
 * looked a package name up as a file beside the parent, `.../@ruststream/metrics?tsx-namespace=`),
 * so there the module is imported directly, a package name resolved from `parentUrl` first.
 */
export async function importFrom(specifier: string, parentUrl: string): Promise<unknown> {
  const runtime = runtimeName();
  if (runtime !== "node") {
    if (specifier.startsWith("file:")) return import(specifier);
    return import(pathToFileURL(resolvePackage(runtime, specifier, parentUrl)).href);
  }
  // Loaded only where it is used: Bun and Deno never need it.
  const { tsImport } = await import("tsx/esm/api");
  return tsImport(specifier, parentUrl);
}
