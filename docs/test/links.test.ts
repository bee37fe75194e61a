import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { checkLinks, linkRewriter, type SiteLink } from "../src/links.js";
import type { PageSource } from "../src/pages.js";
import { Slugger } from "../src/slug.js";

// A small repository: two guide pages, a package README, and a source file no page holds.
const root = mkdtempSync(join(tmpdir(), "ruststream-docs-links-"));
const dist = join(root, "docs", "dist");
for (const dir of ["docs/guide", "docs/dist/packages", "packages/x/src"]) {
  mkdirSync(join(root, dir), { recursive: true });
}
writeFileSync(join(root, "packages/x/src/file.ts"), "");
const a: PageSource = { source: join(root, "docs/guide/a.md"), output: "a.html", section: "Guide" };
const b: PageSource = { source: join(root, "docs/guide/b.md"), output: "b.html", section: "Guide" };
const x: PageSource = {
  source: join(root, "packages/x/README.md"),
  output: "packages/x.html",
  section: "Packages",
};
const pages = [a, b, x];
writeFileSync(join(dist, "b.html"), '<h2 id="retries">Retries</h2>');
writeFileSync(join(dist, "packages/x.html"), "");

afterAll(() => rmSync(root, { recursive: true, force: true }));

function rewrite(page: PageSource, href: string) {
  const links: SiteLink[] = [];
  const broken: string[] = [];
  const result = linkRewriter(root, page, pages, links, broken)(href);
  return { result, links, broken };
}

describe("links", () => {
  test("a link to another page's Markdown points at its HTML, relative to the page", () => {
    expect(rewrite(a, "b.md#retries").result).toBe("b.html#retries");
    expect(rewrite(x, "../../docs/guide/b.md").result).toBe("../b.html");
    expect(rewrite(a, "../../packages/x/README.md").result).toBe("packages/x.html");
  });

  test("a link to a repository file no page holds shows its path; one to nothing is broken", () => {
    expect(rewrite(x, "src/file.ts").result).toEqual({ text: "packages/x/src/file.ts" });
    expect(rewrite(a, "gone.md").broken).toEqual([
      'docs/guide/a.md: link "gone.md": docs/guide/gone.md does not exist',
    ]);
    expect(rewrite(a, "/b.html").broken[0]).toMatch(/is absolute/);
    expect(rewrite(a, "https://example.org/x.md")).toEqual({
      result: "https://example.org/x.md",
      links: [],
      broken: [],
    });
  });

  test("the check finds a missing anchor and a missing file, naming where each is written", () => {
    const links = [
      ...rewrite(a, "b.md#retries").links,
      ...rewrite(a, "b.md#nope").links,
      ...rewrite(a, "api/index.html").links,
    ];
    expect(checkLinks(dist, links, new Map())).toEqual([
      'docs/guide/a.md: link "b.md#nope": b.html has no anchor "#nope"',
      'docs/guide/a.md: link "api/index.html": api/index.html is not in the site',
    ]);
  });

  test("heading ids are GitHub's: lower case, punctuation dropped, a repeat numbered", () => {
    const slugger = new Slugger();
    expect(slugger.slug("Format and codec (src/wire/format/)")).toBe(
      "format-and-codec-srcwireformat",
    );
    expect(slugger.slug("For broker authors: what a broker package implements")).toBe(
      "for-broker-authors-what-a-broker-package-implements",
    );
    expect(slugger.slug("Tests")).toBe("tests");
    expect(slugger.slug("Tests")).toBe("tests-1");
  });
});
