/**
 * Carves a writer's frames out of shared 64 KiB buffers. A `new Uint8Array` per frame gives each
 * message its own off-heap backing store, which the garbage collector tracks and frees one by one:
 * on a producer's hot path that cost rivals encoding the frame. Slices are never reused, so a
 * frame stays valid for as long as anyone holds it (its slab lives until every slice is dropped).
 */
const SLAB_BYTES = 64 * 1024;
/** Larger frames get their own buffer, so one big message does not strand most of a slab. */
const MAX_SLICE = SLAB_BYTES / 8;

export class FrameSlab {
  #slab = new Uint8Array(0);
  #at = 0;

  /** `size` zeroed bytes, like `new Uint8Array(size)`. */
  allocate(size: number): Uint8Array {
    if (size > MAX_SLICE) return new Uint8Array(size);
    if (this.#at + size > this.#slab.length) {
      this.#slab = new Uint8Array(SLAB_BYTES);
      this.#at = 0;
    }
    const out = this.#slab.subarray(this.#at, this.#at + size);
    this.#at += size;
    return out;
  }
}
