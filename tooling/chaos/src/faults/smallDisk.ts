// A small filesystem of its own for a stream file, so the disk can fill up under its writer for
// real: a tmpfs mounted on a fresh folder (root, or CAP_SYS_ADMIN, needed). The `disk-full` fault
// fills every free byte with a filler file, so the next write fails with ENOSPC as it would on a
// full disk; the heal deletes the filler.
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Why a mount failed, with the fix: this scenario cannot run without its own small filesystem. */
function mountRefused(dir: string, error: unknown): Error {
  const detail = (error as { stderr?: Buffer }).stderr?.toString().trim() || String(error);
  return new Error(
    `the disk-full fault needs a small filesystem of its own, and mounting a tmpfs on ${dir} failed (${detail}). ` +
      "Run the chaos suite as root (or with CAP_SYS_ADMIN, e.g. a container started with --cap-add SYS_ADMIN or --privileged), " +
      "or leave the disk-full scenarios out (run other --scenario names)",
  );
}

export class SmallDisk {
  /** Where the tmpfs is mounted; the stream file and its consumer positions go here. */
  readonly dir: string;
  readonly #filler: string;
  #mounted = false;

  private constructor(dir: string) {
    this.dir = dir;
    this.#filler = join(dir, "filler");
  }

  /** Mounts a tmpfs of `bytes` on a fresh folder; throws naming the fix when it cannot. */
  static mount(bytes: number): SmallDisk {
    const dir = mkdtempSync(join(tmpdir(), "ruststream-chaos-disk-"));
    const disk = new SmallDisk(dir);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0700`, "tmpfs", dir], {
        stdio: ["ignore", "ignore", "pipe"],
      });
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw mountRefused(dir, error);
    }
    disk.#mounted = true;
    return disk;
  }

  /**
   * Takes every free byte: big writes first, then smaller ones down to a byte, so not even the
   * tail of a page is left for the next write. Answers the bytes the filler took.
   */
  fill(): number {
    const fd = openSync(this.#filler, "a");
    let taken = 0;
    try {
      for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 8, 1]) {
        const chunk = new Uint8Array(size);
        for (;;) {
          try {
            taken += writeSync(fd, chunk);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
            break;
          }
        }
      }
    } finally {
      closeSync(fd);
    }
    return taken;
  }

  /** The heal: the filler deleted, its space free again. */
  free(): void {
    rmSync(this.#filler, { force: true });
  }

  /** Unmounts and removes the folder; what was on the disk is gone with it. */
  unmount(): void {
    if (!this.#mounted) return;
    this.#mounted = false;
    try {
      unlinkSync(this.#filler);
    } catch {
      // Already freed.
    }
    // Lazy: a replica's log or a reader still closing must not keep the mount (and the folder) behind.
    execFileSync("umount", ["-l", this.dir]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
