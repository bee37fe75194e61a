import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One page of the site: where its Markdown is and where its HTML goes. */
export interface PageSource {
  /** The Markdown file, absolute. */
  readonly source: string;
  /** The HTML file, relative to the site's root. */
  readonly output: string;
  readonly section: "Guide" | "Packages";
}

/**
 * The guide pages in reading order: the navigation lists them so. A Markdown file in docs/guide
 * that is not listed here fails the build, so no page is written and then never linked.
 */
export const guideOrder = [
  "index.md",
  "getting-started.md",
  "file.md",
  "redis.md",
  "kafka.md",
  "pulsar.md",
  "nats.md",
  "rabbitmq.md",
  "postgres.md",
  "outbox.md",
  "handlers.md",
  "retries.md",
  "concurrency.md",
  "testing.md",
  "conformance.md",
  "operating.md",
  "migrating-nestjs.md",
  "migrating-kafkajs.md",
] as const;

/** The guides, then each published package's README as its reference page. */
export function pageSources(root: string): PageSource[] {
  const guideDir = join(root, "docs", "guide");
  const present = readdirSync(guideDir).filter((name) => name.endsWith(".md"));
  const unlisted = present.filter((name) => !(guideOrder as readonly string[]).includes(name));
  const missing = guideOrder.filter((name) => !present.includes(name));
  if (unlisted.length > 0 || missing.length > 0) {
    throw new Error(
      `docs/guide and guideOrder in docs/src/pages.ts disagree (not listed: ${unlisted.join(", ") || "none"}; listed but missing: ${missing.join(", ") || "none"}): list every guide page there, in reading order`,
    );
  }
  const guides: PageSource[] = guideOrder.map((name) => ({
    source: join(guideDir, name),
    output: name.replace(/\.md$/, ".html"),
    section: "Guide",
  }));
  const packagesDir = join(root, "packages");
  const packages: PageSource[] = readdirSync(packagesDir)
    .sort()
    .filter((dir) => {
      const manifest = join(packagesDir, dir, "package.json");
      if (!existsSync(manifest)) return false;
      return (JSON.parse(readFileSync(manifest, "utf8")) as { private?: boolean }).private !== true;
    })
    .map((dir) => ({
      source: join(packagesDir, dir, "README.md"),
      output: `packages/${dir}.html`,
      section: "Packages",
    }));
  return [...guides, ...packages];
}
