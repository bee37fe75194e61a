import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium, which npm test installs (tooling/setup/system.mjs): no browser download. */
const chromiumPath = "/usr/bin/chromium";

/**
 * Chromium, headless, for a test that looks at pages as a person would. `what` names the test in
 * the error when Chromium is missing, which names the fix.
 */
export async function launchHeadless(what: string): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `${what} loads pages in Debian's Chromium, and ${chromiumPath} is missing: install it with \`apt-get install -y chromium\` (npm test does so as root, through tooling/setup/system.mjs)`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    // No sandbox (CI runs as root), and nothing that reaches the network on its own: the machine
    // reaches only package registries, and a background fetch would be a failed request in a page.
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
