import { Redis } from "ioredis";

// What a test cannot see from the client side: whether the server has really taken a command. A
// blocking read shows in MONITOR once the server runs it, that is, once it blocks; a test that closes
// or wakes a subscription waits for that instead of sleeping and hoping the read had begun.

export interface ServerWatch {
  /** Resolves once the server has run `command` naming `key` `times` times in all (since the watch began). */
  ran(command: string, key: string, times?: number, ms?: number): Promise<void>;
  close(): void;
}

export async function watchServer(url: string): Promise<ServerWatch> {
  // monitor() opens a connection of its own; the client it is called on never needs to connect.
  const monitor = await new Redis(url, { protocol: 2, lazyConnect: true }).monitor();
  const seen = new Map<string, number>();
  const waiters = new Set<() => void>();
  const id = (command: string, key: string) => `${command.toLowerCase()} ${key}`;
  monitor.on("monitor", (_time: string, args: string[]) => {
    const [command, ...rest] = args;
    if (command === undefined) return;
    // A command names its key among its first arguments (XREADGROUP after STREAMS, near the end).
    for (const arg of new Set(rest)) {
      const name = id(command, arg);
      seen.set(name, (seen.get(name) ?? 0) + 1);
    }
    for (const wake of [...waiters]) wake();
  });
  return {
    ran(command, key, times = 1, ms = 15_000) {
      const name = id(command, key);
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if ((seen.get(name) ?? 0) < times) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `the server ran ${name} ${seen.get(name) ?? 0} time(s) in ${ms} ms, expected ${times}`,
            ),
          );
        }, ms);
        waiters.add(check);
        check();
      });
    },
    close: () => monitor.disconnect(),
  };
}
