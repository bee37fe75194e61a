import MarkdownIt from "markdown-it";
import { Slugger } from "./slug.js";

/**
 * What a link written in a page's Markdown becomes: another href, or `{ text }` where it points at a
 * repository file the site does not hold (the site has no repository address to send a reader to),
 * shown as that path instead of a link.
 */
export type LinkRewriter = (href: string) => string | { readonly text: string };

export interface Rendered {
  readonly html: string;
  /** The text of the first `#` heading. */
  readonly title: string | undefined;
  /** The ids the page's headings got, for the link check. */
  readonly ids: readonly string[];
}

/**
 * Renders one Markdown page. Raw HTML is off (a page is text, so nothing in it can break the
 * layout); every heading gets a GitHub-style id; every link goes through `rewrite`, which maps a
 * link to another Markdown file onto its page in the site and records it for the link check.
 */
export function renderMarkdown(source: string, rewrite: LinkRewriter): Rendered {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  const slugger = new Slugger();
  const ids: string[] = [];
  let title: string | undefined;
  md.core.ruler.push("ruststream_ids_and_links", (state) => {
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i];
      if (token === undefined) continue;
      if (token.type === "heading_open") {
        const text = (tokens[i + 1]?.children ?? [])
          .filter((child) => child.type === "text" || child.type === "code_inline")
          .map((child) => child.content)
          .join("");
        const id = slugger.slug(text);
        token.attrSet("id", id);
        ids.push(id);
        if (token.tag === "h1" && title === undefined) title = text;
      }
      const children = token.children ?? [];
      for (let c = 0; c < children.length; c++) {
        const child = children[c];
        if (child?.type !== "link_open") continue;
        const href = child.attrGet("href");
        if (href === null) continue;
        const target = rewrite(String(href));
        if (typeof target === "string") {
          child.attrSet("href", target);
          continue;
        }
        // Unlinked: the same text in a span that names the repository path.
        const close = children.slice(c).find((t) => t.type === "link_close");
        child.tag = "span";
        child.attrs = [
          ["class", "repo-path"],
          ["title", `in the repository: ${target.text}`],
        ];
        if (close !== undefined) close.tag = "span";
      }
    }
  });
  const html = md.render(source);
  return { html, title, ids };
}
