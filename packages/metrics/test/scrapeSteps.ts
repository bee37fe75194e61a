// What the backlog scrape tests share: the gauge's lines of a metrics text, and a bounded wait for a
// step (each test waits on what its handlers or its scrape show, never on a quiet window).

/** The `ruststream_backlog...` lines of a metrics text, sorted; only `name`'s when it is given. */
export function backlogLines(text: string, name?: string): string[] {
  return text
    .split("\n")
    .filter(
      (line) =>
        line.startsWith("ruststream_backlog") &&
        (name === undefined || line.includes(`name="${name}"`)),
    )
    .sort();
}

/** Asks `condition` every 20 ms until it holds; fails naming `step` after 15 s. */
export async function until(
  step: string,
  condition: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${step}: still waiting after 15 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
