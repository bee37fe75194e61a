import { resolve } from "node:path";

type Listener = () => void;

// Readers in the same process learn of an append the moment it is written, without waiting for
// the file watcher; readers in other processes rely on the watcher.
const listeners = new Map<string, Set<Listener>>();

export function onAppend(path: string, listener: Listener): () => void {
  const key = resolve(path);
  let set = listeners.get(key);
  if (!set) {
    set = new Set();
    listeners.set(key, set);
  }
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0) listeners.delete(key);
  };
}

export function signalAppend(path: string): void {
  const set = listeners.get(resolve(path));
  if (set) for (const listener of [...set]) listener();
}
