// @ts-check
// The root README's service and its test, taken from the README itself so the rehearsal runs what a
// reader copies, and cannot drift from it: the service is "## A service"'s block that exports `app`,
// the test the block that imports it from "./app.js".
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * @param {string} root
 * @returns {{ service: string, test: string }}
 */
export function readmeExample(root) {
  const text = readFileSync(join(root, "README.md"), "utf8");
  const section = /^## A service\n([\s\S]*?)(?=^## )/m.exec(text)?.[1];
  const fix =
    'keep the root README\'s "## A service" section with the service (`export const app`) and its test (importing "./app.js") as ```ts blocks, or change tooling/release/src/readme.mjs with it';
  if (section === undefined)
    throw new Error(`the root README has no "## A service" section; ${fix}`);
  const blocks = [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
  const service = blocks.find((block) => /^export const app\b/m.test(block));
  const test = blocks.find((block) => block.includes('from "./app.js"'));
  if (service === undefined || test === undefined)
    throw new Error(
      `the root README's "## A service" lacks the ${service === undefined ? "service" : "test"} block; ${fix}`,
    );
  return { service, test };
}

/**
 * The README's service on another broker: its FileBroker import and construction swapped for
 * `broker`'s, the handlers as they are (what the README promises: "Swap the broker").
 * @param {string} service
 * @param {{ importLine: string, construct: string }} broker
 */
export function onBroker(service, broker) {
  const importLine = /^import \{ FileBroker \} from "@ruststream\/file";$/m;
  const construct = /new FileBroker\(\{[^}]*\}\)/;
  if (!importLine.test(service) || !construct.test(service))
    throw new Error(
      "the README's service no longer imports FileBroker from @ruststream/file and constructs it inline: change onBroker in tooling/release/src/readme.mjs to swap the broker the way the README now does",
    );
  return service.replace(importLine, broker.importLine).replace(construct, broker.construct);
}
