// A FIFO with O(1) push and shift: pending sends and received messages run into the thousands, where
// Array.prototype.shift's copying shows.
export class Queue<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  peek(): T | undefined {
    return this.#items[this.#head];
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    // Compact once the dead prefix is both large and most of the array.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Removes and returns everything, oldest first. */
  drain(): T[] {
    const out = this.#items.slice(this.#head) as T[];
    this.#items = [];
    this.#head = 0;
    return out;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.#head; i < this.#items.length; i++) yield this.#items[i] as T;
  }
}
