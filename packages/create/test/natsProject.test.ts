import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { assembleTemplates } from "../scripts/templates.js";
import { writeProject } from "../src/writeProject.js";
import { tempDir } from "./tempDir.js";

// A NATS project: the example's app as it stands, the two @nats-io clients the package requires as
// peers among its dependencies (without them `npm install` warns and the app cannot connect), and
// a README naming what the server must offer.
const dir = tempDir("ruststream-create-nats-");
let templates: string;
beforeAll(async () => {
  templates = await assembleTemplates(join(dir, "templates"));
});

const read = (path: string) => readFileSync(join(dir, "nats-svc", path), "utf8");
const repo = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8");

it("writes examples/nats's app with the package's client peers as dependencies", async () => {
  await writeProject(
    { directory: join(dir, "nats-svc"), name: "nats-svc", broker: "nats", engine: undefined },
    "1.2.3",
    templates,
  );
  expect(read("src/app.ts")).toBe(repo("examples/nats/src/app.ts"));
  const { dependencies } = JSON.parse(read("package.json")) as {
    dependencies: Record<string, string>;
  };
  const { peerDependencies, peerDependenciesMeta = {} } = JSON.parse(
    repo("packages/nats/package.json"),
  ) as {
    peerDependencies: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  };
  // The stores' clients are optional peers, installed only by a service that uses KV or objects.
  const clients = Object.keys(peerDependencies).filter(
    (p) => !p.startsWith("@ruststream/") && peerDependenciesMeta[p]?.optional !== true,
  );
  expect(clients).toEqual(["@nats-io/jetstream", "@nats-io/transport-node"]);
  for (const client of clients) expect(dependencies[client], client).toBeDefined();
  expect(dependencies["@nats-io/kv"]).toBeUndefined();
  expect(dependencies["@ruststream/nats"]).toBe("1.2.3");
  const readme = read("README.md");
  expect(readme).toMatch(/on NATS JetStream/);
  expect(readme).toMatch(/NATS_URL/);
  expect(readme).toMatch(/nats-server -js/);
  expect(readme).toMatch(/ORDERS_STREAM/);
});
