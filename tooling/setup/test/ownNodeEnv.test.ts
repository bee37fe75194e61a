import { existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ownNodeEnv } from "../node.mjs";

// A native build (librdkafka's addon) must use the headers of the Node that will load it: an npmrc's
// nodedir naming another Node's headers is overridden, never inherited.
describe("ownNodeEnv", () => {
  const dir = dirname(dirname(process.execPath));

  it("puts this Node's bin first on PATH", () => {
    const env = ownNodeEnv({ PATH: "/elsewhere/bin" });
    expect(env.PATH).toBe(`${join(dir, "bin")}${delimiter}/elsewhere/bin`);
  });

  it("names this Node's headers over an inherited nodedir, or drops that nodedir when it has none", () => {
    const env = ownNodeEnv({ PATH: "/elsewhere/bin", npm_config_nodedir: "/usr" });
    if (existsSync(join(dir, "include", "node", "node_version.h"))) {
      expect(env.npm_config_nodedir).toBe(dir);
    } else {
      expect(env).not.toHaveProperty("npm_config_nodedir");
    }
  });
});
