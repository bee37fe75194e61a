// Self time of a V8 .cpuprofile by function and by where its code lives (ioredis, its RESP parser,
// @ruststream/core, @ruststream/redis, the bench, Node's internals), for the README's account of
// where a row's time goes.
//
//   node src/redis/drain/profileSummary.ts <file.cpuprofile> [functions to list]
import { readFileSync } from "node:fs";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const [file, topArg = "40"] = process.argv.slice(2);
if (file === undefined) throw new Error("pass a .cpuprofile");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]!;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}

function place(url: string, name: string): string {
  if (url === "") return name.startsWith("(") ? name : "(native)";
  if (url.includes("redis-parser")) return "redis-parser";
  if (url.includes("/ioredis/")) return "ioredis";
  if (url.includes("packages/core/")) return "@ruststream/core";
  if (url.includes("packages/redis/")) return "@ruststream/redis";
  if (url.includes("packages/kafka/")) return "@ruststream/kafka";
  if (url.includes("tooling/bench/")) return "bench";
  if (url.startsWith("node:")) return "node internals";
  return url.replace(/^.*node_modules\/\.pnpm\/([^/]+).*$/, "$1");
}

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  total += us;
  if (functionName === "(idle)") {
    idle += us;
    continue;
  }
  const where = place(url, functionName);
  const name = `${functionName || "(anonymous)"} ${url.replace(/^.*\//, "")}:${lineNumber + 1} [${where}]`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  byPlace.set(where, (byPlace.get(where) ?? 0) + us);
}
const busy = total - idle;
const pct = (us: number) => `${((us / busy) * 100).toFixed(1)}%`.padStart(6);
console.log(
  `${(total / 1e6).toFixed(2)} s sampled, ${(idle / 1e6).toFixed(2)} s idle; shares of the busy ${(busy / 1e6).toFixed(2)} s`,
);
console.log("\nby place:");
for (const [where, us] of [...byPlace].sort((a, b) => b[1] - a[1])) {
  console.log(`${pct(us)}  ${where}`);
}
console.log("\nby function (self):");
for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg))) {
  console.log(`${pct(us)}  ${name}`);
}
