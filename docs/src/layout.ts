import { posix } from "node:path";

export interface NavEntry {
  readonly title: string;
  /** The page's file, relative to the site's root. */
  readonly output: string;
  readonly section: "Guide" | "Packages" | "Reference";
}

export const siteName = "RustStream for TypeScript";

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

/** A path from the page at `from` to `to`, both relative to the site's root. */
export function hrefBetween(from: string, to: string): string {
  return posix.relative(posix.dirname(from), to) || posix.basename(to);
}

/**
 * The one layout: the navigation (every page, by section, the current one marked) beside the
 * page's content. Links are relative, so the site works served or opened from disk.
 */
export function layout(page: NavEntry, body: string, nav: readonly NavEntry[]): string {
  const sections = (["Guide", "Packages", "Reference"] as const).map((section) => {
    const items = nav
      .filter((entry) => entry.section === section)
      .map((entry) => {
        const current = entry.output === page.output ? ' aria-current="page"' : "";
        return `<li><a href="${hrefBetween(page.output, entry.output)}"${current}>${escapeHtml(entry.title)}</a></li>`;
      })
      .join("\n");
    return `<h2>${section}</h2>\n<ul>\n${items}\n</ul>`;
  });
  const title = page.output === "index.html" ? siteName : `${page.title} · ${siteName}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="${hrefBetween(page.output, "favicon.svg")}" type="image/svg+xml">
<link rel="stylesheet" href="${hrefBetween(page.output, "style.css")}">
</head>
<body>
<nav aria-label="Site">
<a class="site" href="${hrefBetween(page.output, "index.html")}">${siteName}</a>
${sections.join("\n")}
</nav>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The site's one stylesheet: readable text, a fixed navigation column, tables and code that scroll. */
export const stylesheet = `:root { color-scheme: light dark; --fg: #1d2126; --bg: #ffffff; --muted: #5b6470; --line: #d9dde3; --code: #f3f5f7; --accent: #a23a10; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e6ea; --bg: #16181c; --muted: #9aa3ad; --line: #30343a; --code: #22252a; --accent: #f08a5d; } }
* { box-sizing: border-box; }
body { margin: 0; display: flex; min-height: 100vh; font: 16px/1.6 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
nav { flex: 0 0 16rem; padding: 1.5rem 1rem; border-right: 1px solid var(--line); position: sticky; top: 0; height: 100vh; overflow-y: auto; font-size: 0.92rem; }
nav .site { display: block; font-weight: 700; font-size: 1.05rem; margin-bottom: 1rem; color: var(--fg); text-decoration: none; }
nav h2 { font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin: 1.2rem 0 0.4rem; }
nav ul { list-style: none; margin: 0; padding: 0; }
nav li a { display: block; padding: 0.15rem 0.4rem; border-radius: 4px; color: var(--fg); text-decoration: none; }
nav li a[aria-current="page"] { background: var(--code); color: var(--accent); font-weight: 600; }
main { flex: 1; min-width: 0; max-width: 52rem; padding: 1.5rem 2.5rem 4rem; }
a { color: var(--accent); }
h1, h2, h3 { line-height: 1.25; }
code { font: 0.88em/1.5 ui-monospace, monospace; background: var(--code); padding: 0.1em 0.3em; border-radius: 3px; }
pre { background: var(--code); padding: 0.9rem 1rem; overflow-x: auto; border-radius: 6px; }
pre code { padding: 0; background: none; }
table { border-collapse: collapse; display: block; overflow-x: auto; margin: 1rem 0; }
th, td { border: 1px solid var(--line); padding: 0.35rem 0.6rem; text-align: left; vertical-align: top; }
.repo-path { font-family: ui-monospace, monospace; font-size: 0.9em; }
@media (max-width: 48rem) { body { display: block; } nav { position: static; height: auto; border-right: none; border-bottom: 1px solid var(--line); } main { padding: 1rem; } }
`;
