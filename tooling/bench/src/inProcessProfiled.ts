// The in-process bench's rows for profileRow.ts: the full app or the bare loop, on the ack or the
// reply path, over the memory broker, timed on the wall clock or the process's CPU clock.
import * as core from "@ruststream/core";
import { benchClock } from "./benchClock.js";
import { bareLoop, fullApp, orderPayloads } from "./inProcessApp.js";
import type { ProfiledBench } from "./profiled.js";

export const profiled: ProfiledBench = {
  row: [
    { name: "app|bare", default: "app" },
    { name: "ack|reply", default: "reply" },
  ],
  count: 200_000,
  times: 6,
  extra: { name: "wall|cpu", default: "wall" },
  open: async ([which, path], count, clockArg) => {
    if (which !== "app" && which !== "bare")
      throw new Error(`the row is app or bare, not ${which}`);
    if (path !== "ack" && path !== "reply")
      throw new Error(`the path is ack or reply, not ${path}`);
    const clock = benchClock(clockArg);
    const payloads = orderPayloads(core, count);
    const reply = path === "reply";
    return {
      label: `${which}, ${path}, ${clock.name} time`,
      run: async () => {
        const rate =
          which === "app"
            ? await fullApp(core, payloads, reply, undefined, clock.now)
            : await bareLoop(core, payloads, reply, clock.now);
        return { ms: (count / rate) * 1000 };
      },
      close: () => {},
    };
  },
};
