/**
 * Writes to stdout and resolves once the text is handed to the OS, so a process that exits right
 * after does not cut a document piped to another program short.
 */
export function writeOut(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

/** A line on stderr: the CLI's own messages, never mixed into a document on stdout. */
export function writeErr(text: string): void {
  process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
}
