import MarkdownIt from "markdown-it";

/** One ```ts block of a guide page. */
export interface Snippet {
  /** The guide file it is in, as given. */
  readonly page: string;
  /** The line of its opening fence, from 1. */
  readonly line: number;
  readonly code: string;
  /** Why it is compiled but not run, when its info string says `no-run: <reason>`. */
  readonly noRun: string | undefined;
}

const languagesThatMustBeTs = new Set(["typescript", "mts", "cts", "tsx", "js", "javascript"]);

/**
 * The TypeScript blocks of one Markdown page. The info string is `ts`, or `ts no-run: <reason>`
 * for a block that is compiled but not run (it needs a broker server, or serves until a signal);
 * anything else after `ts`, a `no-run` without a reason, or code under another TypeScript or
 * JavaScript name is refused, so no block slips past the compiler unseen.
 */
export function extractSnippets(page: string, markdown: string): Snippet[] {
  const tokens = new MarkdownIt().parse(markdown, {});
  const snippets: Snippet[] = [];
  for (const token of tokens) {
    if (token.type !== "fence") continue;
    const info = token.info.trim();
    const [language = "", ...rest] = info.split(/\s+/);
    const line = (token.map?.[0] ?? 0) + 1;
    if (languagesThatMustBeTs.has(language)) {
      throw new Error(
        `${page}:${line}: a \`${language}\` block: write TypeScript as \`ts\` so it is compiled and run (or \`ts no-run: <reason>\`)`,
      );
    }
    if (language !== "ts") continue;
    const marker = rest.join(" ");
    let noRun: string | undefined;
    if (marker !== "") {
      const match = /^no-run:\s*(\S.*)$/.exec(marker);
      if (match?.[1] === undefined) {
        throw new Error(
          `${page}:${line}: the info string "${info}" is neither \`ts\` nor \`ts no-run: <reason>\`: give the reason the block cannot run`,
        );
      }
      noRun = match[1];
    }
    snippets.push({ page, line, code: token.content, noRun });
  }
  return snippets;
}
