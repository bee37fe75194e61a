import { existsSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import type { LinkRewriter } from "./markdown.js";
import type { PageSource } from "./pages.js";

/** A link inside the site, to be checked once every file is written. */
export interface SiteLink {
  /** The Markdown file it was written in (or the layout, for the navigation). */
  readonly from: string;
  /** The link as written there. */
  readonly written: string;
  /** The file it points at, relative to the site's root. */
  readonly target: string;
  readonly anchor: string | undefined;
}

const external = /^[a-z][a-z0-9+.-]*:/i;

/**
 * The rewriter for one page. A link to a Markdown file that is a page of the site becomes a link to
 * that page; a link to another file of the repository (source, a test, a README the site does not
 * hold) becomes its path as text, since the site has no repository to send a reader to; any other
 * relative link is a path in the built site (the API reference under api/). Every link inside the
 * site is recorded in `links`; a link to a file that exists nowhere is recorded in `broken` at once.
 */
export function linkRewriter(
  root: string,
  page: PageSource,
  pages: readonly PageSource[],
  links: SiteLink[],
  broken: string[],
): LinkRewriter {
  const from = relative(root, page.source);
  const here = posix.dirname(page.output);
  return (href) => {
    if (external.test(href)) return href;
    const hash = href.indexOf("#");
    const path = decodeURIComponent(hash === -1 ? href : href.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(href.slice(hash + 1));
    if (path === "") {
      links.push({ from, written: href, target: page.output, anchor });
      return href;
    }
    if (path.startsWith("/")) {
      broken.push(
        `${from}: link "${href}" is absolute: write it relative to the page, so the site also works opened from disk`,
      );
      return href;
    }
    const inRepo = resolve(dirname(page.source), path);
    const target = pages.find((p) => p.source === inRepo);
    if (target !== undefined) {
      links.push({ from, written: href, target: target.output, anchor });
      const rel = posix.relative(here, target.output) || posix.basename(target.output);
      return anchor === undefined ? rel : `${rel}#${encodeURIComponent(anchor)}`;
    }
    if (existsSync(inRepo) && inRepo.startsWith(root + sep)) {
      return { text: relative(root, inRepo).split(sep).join("/") };
    }
    if (path.endsWith(".md")) {
      broken.push(`${from}: link "${href}": ${relative(root, inRepo)} does not exist`);
      return href;
    }
    links.push({ from, written: href, target: posix.normalize(posix.join(here, path)), anchor });
    return href;
  };
}

/**
 * Checks every recorded link against the written site: the file must exist (a folder means its
 * index.html), and an anchor must be an id in it. Returns one line per broken link.
 */
export function checkLinks(
  dist: string,
  links: readonly SiteLink[],
  knownIds: ReadonlyMap<string, readonly string[]>,
): string[] {
  const idsOf = new Map(knownIds);
  const problems: string[] = [];
  for (const link of links) {
    const target = link.target.endsWith("/") ? `${link.target}index.html` : link.target;
    const file = join(dist, target);
    if (target.startsWith("..") || !existsSync(file)) {
      problems.push(`${link.from}: link "${link.written}": ${target} is not in the site`);
      continue;
    }
    if (link.anchor === undefined || link.anchor === "") continue;
    let ids = idsOf.get(target);
    if (ids === undefined) {
      ids = [...readFileSync(file, "utf8").matchAll(/\sid="([^"]+)"/g)].map((m) => m[1] ?? "");
      idsOf.set(target, ids);
    }
    if (!ids.includes(link.anchor)) {
      problems.push(
        `${link.from}: link "${link.written}": ${target} has no anchor "#${link.anchor}"`,
      );
    }
  }
  return problems;
}
