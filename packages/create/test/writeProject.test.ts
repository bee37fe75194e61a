import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { assembleTemplates } from "../scripts/templates.js";
import { brokerNames } from "../src/brokers.js";
import type { Choices } from "../src/choices.js";
import { writeProject } from "../src/writeProject.js";
import { tempDir } from "./tempDir.js";

const dir = tempDir("ruststream-create-write-");
let templates: string;
beforeAll(async () => {
  templates = await assembleTemplates(join(dir, "templates"));
});

function choices(project: string, broker: Choices["broker"], engine?: Choices["engine"]): Choices {
  return { directory: join(dir, project), name: project, broker, engine };
}

const read = (project: string, path: string) => readFileSync(join(dir, project, path), "utf8");
const pkg = (project: string) =>
  JSON.parse(read(project, "package.json")) as {
    name: string;
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };

describe("writeProject", () => {
  it("writes the example's app, main and in-process test, and the shared files", async () => {
    const written = await writeProject(choices("redis-svc", "redis"), "1.2.3", templates);
    expect(written).toEqual([
      ".gitignore",
      "README.md",
      "package.json",
      "src/app.ts",
      "src/main.ts",
      "test/app.test.ts",
      "tsconfig.json",
      "vitest.config.ts",
    ]);
    const example = (path: string) =>
      readFileSync(new URL(`../../../examples/redis/${path}`, import.meta.url), "utf8");
    for (const path of ["src/app.ts", "src/main.ts", "test/app.test.ts"]) {
      expect(read("redis-svc", path), path).toBe(example(path));
    }
    expect(read("redis-svc", ".gitignore")).toMatch(/node_modules/);
    const readme = read("redis-svc", "README.md");
    expect(readme).toMatch(/^# redis-svc\n/);
    expect(readme).toMatch(/REDIS_URL/);
    expect(readme).not.toMatch(/\{\{/);
  });

  it("gives every @ruststream dependency the create package's own version, and leaves the tooling out", async () => {
    await writeProject(choices("versions", "pulsar"), "1.2.3", templates);
    const { name, scripts, dependencies, devDependencies } = pkg("versions");
    expect(name).toBe("versions");
    expect(scripts).toMatchObject({ start: "tsx src/main.ts", test: "vitest run" });
    expect(dependencies["@ruststream/core"]).toBe("1.2.3");
    expect(dependencies["@ruststream/pulsar"]).toBe("1.2.3");
    expect(devDependencies["@ruststream/testing"]).toBe("1.2.3");
    expect(Object.keys(devDependencies).filter((d) => d.includes("tooling"))).toEqual([]);
    const all = JSON.stringify({ dependencies, devDependencies });
    expect(all).not.toMatch(/workspace:/);
    expect(devDependencies.vitest).toBeDefined();
  });

  it.each(
    brokerNames,
  )("gives a new %s project what vitest needs from every package manager", async (broker) => {
    await writeProject(choices(`peers-${broker}`, broker), "1.2.3", templates);
    const project = pkg(`peers-${broker}`) as ReturnType<typeof pkg> & {
      engines: { node: string };
    };
    // vite is vitest's required peer: npm and pnpm add it, yarn does not.
    expect(project.devDependencies.vite).toMatch(/^\d+\.\d+\.\d+$/);
    // vitest's optional peer @types/node starts at 22: npm refuses the install (ERESOLVE) when the
    // project's own range is older, so it starts at the Node floor the project declares.
    const floor = Number(/^>=(\d+)$/.exec(project.engines.node)?.[1]);
    const lowest = Number(/^\^(\d+)\./.exec(project.devDependencies["@types/node"] ?? "")?.[1]);
    expect(lowest, project.devDependencies["@types/node"]).toBeGreaterThanOrEqual(floor);
    expect(floor).toBeGreaterThanOrEqual(22);
  });

  it("keeps only the chosen Kafka engine's client, and names the engine in app.ts", async () => {
    await writeProject(choices("kjs", "kafka", "kafkajs"), "1.2.3", templates);
    await writeProject(choices("rdk", "kafka", "librdkafka"), "1.2.3", templates);
    expect(Object.keys(pkg("kjs").dependencies)).toContain("kafkajs");
    expect(Object.keys(pkg("kjs").dependencies)).not.toContain("@confluentinc/kafka-javascript");
    expect(Object.keys(pkg("rdk").dependencies)).toContain("@confluentinc/kafka-javascript");
    expect(Object.keys(pkg("rdk").dependencies)).not.toContain("kafkajs");
    expect(read("kjs", "src/app.ts")).toMatch(/engine: "kafkajs"/);
    expect(read("rdk", "src/app.ts")).toMatch(/engine: "librdkafka"/);
    expect(read("rdk", "src/app.ts")).not.toMatch(/kafkajs/);
    expect(read("rdk", "README.md")).toMatch(
      /librdkafka engine \(`@confluentinc\/kafka-javascript`\)/,
    );
  });

  it("gives a RabbitMQ project the broker package's client peer, amqplib", async () => {
    await writeProject(choices("rabbit", "rabbitmq"), "1.2.3", templates);
    const { peerDependencies } = JSON.parse(
      readFileSync(new URL("../../rabbitmq/package.json", import.meta.url), "utf8"),
    ) as { peerDependencies: Record<string, string> };
    const clients = Object.keys(peerDependencies).filter((d) => !d.startsWith("@ruststream/"));
    expect(clients).toEqual(["amqplib"]);
    const { dependencies } = pkg("rabbit");
    expect(dependencies["@ruststream/rabbitmq"]).toBe("1.2.3");
    expect(Object.keys(dependencies)).toEqual(expect.arrayContaining(clients));
    expect(read("rabbit", "README.md")).toMatch(/RABBITMQ_URL/);
  });

  it("gives a PostgreSQL project its client, pg, and says where the database is", async () => {
    await writeProject(choices("pg-svc", "postgres"), "1.2.3", templates);
    const { dependencies } = pkg("pg-svc");
    expect(dependencies["@ruststream/postgres"]).toBe("1.2.3");
    // pg is the package's peer: the project installs it, at the example's version.
    const example = JSON.parse(
      readFileSync(new URL("../../../examples/postgres/package.json", import.meta.url), "utf8"),
    ) as { dependencies: Record<string, string> };
    expect(dependencies.pg).toBe(example.dependencies.pg);
    expect(read("pg-svc", "src/app.ts")).toMatch(
      /new PostgresBroker\(\{ url, ensureSchema: true \}\)/,
    );
    expect(read("pg-svc", "README.md")).toMatch(
      /service on a queue in PostgreSQL\s[\s\S]*`DATABASE_URL`/,
    );
  });

  it("writes into an empty directory that exists, and refuses one that is not empty", async () => {
    mkdirSync(join(dir, "empty"));
    await writeProject(choices("empty", "file"), "1.2.3", templates);
    mkdirSync(join(dir, "full"));
    writeFileSync(join(dir, "full", "notes.txt"), "mine");
    await expect(writeProject(choices("full", "file"), "1.2.3", templates)).rejects.toThrow(
      /full is not empty \(notes.txt\): give a new directory, or empty this one first/,
    );
    expect(readFileSync(join(dir, "full", "notes.txt"), "utf8")).toBe("mine");
  });

  it("says how to build the templates when there are none", async () => {
    await expect(
      writeProject(choices("none", "file"), "1.2.3", join(dir, "missing")),
    ).rejects.toThrow(/was not built .*pnpm --filter @ruststream\/create build/);
  });
});
