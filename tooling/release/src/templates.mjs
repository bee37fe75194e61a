// @ts-check
// The small services each install runs: one ES module, one CommonJS script, each publishing one
// message and handling it on the real broker (a stream file for the file broker), and a TypeScript
// one that is only type-checked. Each names its own topic, so runs never read each other's messages.

/**
 * How a service makes its broker: the class, imported from `module`, and the expression that
 * constructs it; `imports` names what else of `module` that expression uses.
 * @typedef {{ module: string, className: string, construct: string, imports?: string[] }} BrokerCode
 */

/** The names a service imports from its broker's module. */
export function importedNames(/** @type {BrokerCode} */ broker) {
  return [broker.className, ...(broker.imports ?? [])].join(", ");
}

/**
 * @param {BrokerCode} broker
 * @param {string} topic
 * @param {"esm" | "cjs"} kind
 */
export function serviceScript(broker, topic, kind) {
  const body = `const topic = ${JSON.stringify(topic)};
const app = new RustStream({ name: "rehearsal", version: "1.0.0" });
let handled;
const got = new Promise((resolve) => {
  handled = resolve;
});
app.broker(${broker.construct}, (b) => {
  b.subscriber(topic).handle((value) => {
    handled(value);
  });
});
const running = await app.start();
const receipt = await running.publish(topic, { from: "${kind}", pid: process.pid });
const timer = setTimeout(() => {
  console.error(\`${kind}: published (\${JSON.stringify(receipt)}) but nothing handled within 60 s\`);
  process.exit(1);
}, 60_000);
const value = await got;
clearTimeout(timer);
await running.stop();
console.log(\`${kind}: published to \${topic} and handled \${JSON.stringify(value)} on Node \${process.versions.node}\`);`;
  const header =
    "// Written by the release rehearsal (tooling/release): one message published and handled.\n";
  if (kind === "esm")
    return `${header}import { RustStream } from "@ruststream/core";
import { ${importedNames(broker)} } from "${broker.module}";

${body}
`;
  return `${header}const { RustStream } = require("@ruststream/core");
const { ${importedNames(broker)} } = require("${broker.module}");

async function main() {
${indent(body)}
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;
}

/**
 * The same service in TypeScript, for tsc only: it touches the types a user's service touches.
 * @param {BrokerCode} broker
 */
export function serviceTs(broker) {
  return `// Written by the release rehearsal (tooling/release): type-checked, not run.
import { RustStream, type RunningApp } from "@ruststream/core";
import { ${importedNames(broker)} } from "${broker.module}";

const app = new RustStream({ name: "rehearsal", version: "1.0.0" });
app.broker(${broker.construct}, (b) => {
  b.subscriber("rehearsal")
    .maxAttempts(2)
    .handle(async (value, ctx) => {
      ctx.log.info({ value, attempt: ctx.attempt }, "handled");
    });
});

export async function once(): Promise<void> {
  const running: RunningApp = await app.start();
  await running.publish("rehearsal", { from: "ts" });
  await running.stop();
}
`;
}

/** tsconfig.json for one of the two resolutions a user's project has: strict, libraries checked. */
export function tsconfig(/** @type {"NodeNext" | "Bundler"} */ resolution) {
  const modes =
    resolution === "NodeNext"
      ? { module: "NodeNext", moduleResolution: "NodeNext" }
      : { module: "ESNext", moduleResolution: "Bundler" };
  // No skipLibCheck and no @types/node of our own: the published .d.ts must stand on what the
  // packages bring.
  return `${JSON.stringify(
    {
      compilerOptions: { strict: true, noEmit: true, target: "ES2022", ...modes },
      include: ["app.ts", "service.ts"],
    },
    null,
    2,
  )}\n`;
}

/** Loads every entry with require() (".cjs") or import() (".mjs") and prints what each gave. */
export function entriesScript(/** @type {"cjs" | "mjs"} */ kind) {
  const load = kind === "cjs" ? "require(spec)" : "await import(spec)";
  const body = `const specs = JSON.parse(process.argv[2] ?? "[]");
const results = {};
for (const spec of specs) {
  try {
    const loaded = ${load};
    results[spec] = { ok: true, exports: Object.keys(loaded).length };
  } catch (error) {
    results[spec] = { ok: false, error: String(error?.message ?? error).split("\\n")[0] };
  }
}
console.log(JSON.stringify(results));`;
  return kind === "cjs" ? `(async () => {\n${indent(body)}\n})();\n` : `${body}\n`;
}

function indent(/** @type {string} */ text) {
  return text
    .split("\n")
    .map((line) => (line ? `  ${line}` : line))
    .join("\n");
}
