// The publish bench's rows for ../profileRow.ts: a broker and a row as main.ts names them
// (`redis`, `kafka-rdkafka`, ...; a row's printed name), `count` messages published with `in
// flight` outstanding (500 by default, as main.ts), each run onto a fresh name.
import type { ProfiledBench } from "../profiled.js";
import { brokerNames, rowsOf } from "./brokers.js";

export const profiled: ProfiledBench = {
  row: [
    { name: brokerNames.join("|"), default: "redis" },
    { name: "row", default: "app.publish" },
  ],
  count: 200_000,
  times: 3,
  extra: { name: "in flight", default: "500" },
  open: async ([brokerArg = "", rowArg = ""], count, depthArg) => {
    const rows = await rowsOf(brokerArg);
    const row = rows.find((r) => r.name === rowArg);
    if (row === undefined) {
      throw new Error(`no row "${rowArg}" on ${brokerArg}: ${rows.map((r) => r.name).join(", ")}`);
    }
    const depth = Number(depthArg);
    return {
      label: `${brokerArg} / ${row.name}`,
      run: () => row.run(count, depth),
      close: () => {},
    };
  },
};
