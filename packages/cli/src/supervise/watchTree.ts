import { type Dirent, type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import { extname, join, relative } from "node:path";

/** Files whose change restarts the service: code and its configuration. */
export const watchedExtensions: readonly string[] = [
  ".ts",
  ".mts",
  ".cts",
  ".tsx",
  ".js",
  ".mjs",
  ".cjs",
  ".jsx",
  ".json",
];

/** Folders never watched: installed packages, build output, and hidden folders (.git, .cache). */
export function ignoredFolder(name: string): boolean {
  return name === "node_modules" || name === "dist" || name.startsWith(".");
}

/** Whether a change to this file restarts the service; data (stream files, positions, logs) does not. */
export function watchedFile(name: string): boolean {
  return watchedExtensions.includes(extname(name));
}

export interface TreeWatcher {
  close(): void;
}

/**
 * Watches `root` and the folders under it, one `fs.watch` per folder, never entering an ignored
 * folder (a recursive `fs.watch` would walk all of node_modules), and reports each change to a
 * watched file by its path relative to `root`. Folders created later are watched as they appear.
 */
export function watchTree(root: string, onChange: (path: string) => void): TreeWatcher {
  const watchers = new Map<string, FSWatcher>();
  const forget = (dir: string): void => {
    watchers.get(dir)?.close();
    watchers.delete(dir);
  };
  const add = (dir: string): void => {
    if (watchers.has(dir)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, (_event, filename) => {
        if (filename === null) return;
        const path = join(dir, filename);
        if (isFolder(path)) {
          if (!ignoredFolder(filename)) add(path);
        } else if (watchedFile(filename)) {
          onChange(relative(root, path));
        }
      });
    } catch {
      return; // gone already, or unreadable: nothing to watch there
    }
    watcher.on("error", () => forget(dir));
    watchers.set(dir, watcher);
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !ignoredFolder(entry.name)) add(join(dir, entry.name));
    }
  };
  add(root);
  return {
    close() {
      for (const dir of [...watchers.keys()]) forget(dir);
    },
  };
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
