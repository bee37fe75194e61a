import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import type { RustStreamError } from "@ruststream/core";
import { fileError } from "../format/errors.js";

/** The writer lock of one stream file, held by this process. */
export interface FileLock {
  readonly path: string;
  release(): void;
}

export function lockPathOf(streamPath: string): string {
  return `${streamPath}.lock`;
}

/** Whether `pid` names a running process (one owned by another user counts: it is alive). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readPid(lockPath: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, "utf8").trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function tryCreate(lockPath: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, `${process.pid}\n`);
  } catch (error) {
    // A lock without our pid (a full disk refused it) would read as held forever, by this process
    // and every later one: it goes, and the caller's next try (the disk freed) creates it again.
    closeSync(fd);
    unlinkSync(lockPath);
    throw error;
  }
  closeSync(fd);
  return true;
}

function lockedError(streamPath: string, pid: number | undefined): RustStreamError {
  const holder = pid === undefined ? "another process" : `process ${pid}`;
  return fileError(
    "FILE_LOCKED",
    `${streamPath} is being written by ${holder} (lock file ${lockPathOf(streamPath)}): one writer per file; stop that process, or publish through it. A lock left by a process that no longer runs is taken over automatically`,
  );
}

/**
 * Takes the writer lock of `streamPath`: a lock file created exclusively, holding our pid. A lock
 * whose pid no longer runs was left by a crash and is taken over; a live holder is refused.
 */
export function acquireLock(streamPath: string): FileLock {
  const lockPath = lockPathOf(streamPath);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(lockPath)) return held(lockPath);
    const pid = readPid(lockPath);
    // No readable pid: the holder is between creating the file and writing to it.
    if (pid === undefined || isAlive(pid)) throw lockedError(streamPath, pid);
    // Stale. Renaming it away is atomic, so of two processes taking over only one moves this
    // file; whoever moved a lock that turns out to be live puts it back.
    const aside = `${lockPath}.stale-${process.pid}`;
    try {
      renameSync(lockPath, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    const moved = readPid(aside);
    if (moved !== undefined && moved !== pid && isAlive(moved)) {
      renameSync(aside, lockPath);
      throw lockedError(streamPath, moved);
    }
    unlinkSync(aside);
  }
  throw lockedError(streamPath, readPid(lockPath));
}

function held(lockPath: string): FileLock {
  let released = false;
  return {
    path: lockPath,
    release() {
      if (released) return;
      released = true;
      // Only our own lock is removed: a lock someone else holds now is theirs.
      if (readPid(lockPath) === process.pid) unlinkSync(lockPath);
    },
  };
}
