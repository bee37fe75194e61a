import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { writeApiReference } from "./apiReference.js";
import { layout, type NavEntry, stylesheet } from "./layout.js";
import { checkLinks, linkRewriter, type SiteLink } from "./links.js";
import { renderMarkdown } from "./markdown.js";
import { pageSources } from "./pages.js";

export interface BuiltSite {
  readonly dist: string;
  /** Every page written from Markdown, relative to `dist`, with its title. */
  readonly pages: readonly NavEntry[];
}

/**
 * Builds the site into docs/dist: the API reference under api/, then every guide and package page
 * in the layout, then the link check over all of them. A broken link fails the build, each one
 * named with the file it is written in.
 */
export async function buildSite(root: string): Promise<BuiltSite> {
  const dist = join(root, "docs", "dist");
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  await writeApiReference(root, join(dist, "api"));

  const sources = pageSources(root);
  const links: SiteLink[] = [];
  const broken: string[] = [];
  const ids = new Map<string, readonly string[]>();
  const rendered = sources.map((page) => {
    const result = renderMarkdown(
      readFileSync(page.source, "utf8"),
      linkRewriter(root, page, sources, links, broken),
    );
    if (result.title === undefined) {
      broken.push(
        `${relative(root, page.source)}: no "# title" heading; every page starts with one`,
      );
    }
    ids.set(page.output, result.ids);
    return { page, ...result };
  });
  const nav: NavEntry[] = [
    ...rendered.map(({ page, title }) => ({
      title: title ?? page.output,
      output: page.output,
      section: page.section,
    })),
    { title: "API reference", output: "api/index.html", section: "Reference" },
  ];
  for (const entry of nav) {
    links.push({
      from: "docs/src/layout.ts",
      written: entry.output,
      target: entry.output,
      anchor: undefined,
    });
  }
  for (const { page, html } of rendered) {
    const entry = nav.find((e) => e.output === page.output);
    if (entry === undefined) throw new Error(`no navigation entry for ${page.output}`);
    const file = join(dist, page.output);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, layout(entry, html, nav));
  }
  writeFileSync(join(dist, "style.css"), stylesheet);
  copyFileSync(join(root, "docs", "src", "favicon.svg"), join(dist, "favicon.svg"));

  const problems = [...broken, ...checkLinks(dist, links, ids)];
  if (problems.length > 0) {
    throw new Error(
      `the docs have ${problems.length} broken link${problems.length === 1 ? "" : "s"}; fix each where it is written:\n  ${problems.join("\n  ")}`,
    );
  }
  return { dist, pages: nav.filter((entry) => entry.section !== "Reference") };
}

// `pnpm --filter @ruststream/docs build` runs this file.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  buildSite(root).then(
    (site) =>
      console.log(
        `docs: ${site.pages.length} pages and the API reference in ${relative(process.cwd(), site.dist) || "."}`,
      ),
    (error: unknown) => {
      console.error(`docs build failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}
