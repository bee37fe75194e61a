/**
 * Heading ids as GitHub makes them (lower case, punctuation dropped, spaces to hyphens, a repeat
 * numbered), so an anchor that works in a package README on GitHub works on its page here too.
 */
export class Slugger {
  readonly #seen = new Map<string, number>();

  slug(text: string): string {
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = this.#seen.get(base);
    this.#seen.set(base, (count ?? 0) + 1);
    return count === undefined ? base : `${base}-${count}`;
  }
}
