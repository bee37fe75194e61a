// @ts-check
// Debian packages of servers (rabbitmq-server, prometheus, ...) start a system service when they are
// installed. The tests never use those services: each server is started by tooling/brokers on its own
// ports and data, and a system service would hold the default ports and files for nothing. Debian's
// way to say "start nothing" is /usr/sbin/policy-rc.d exiting 101 (invoke-rc.d and
// deb-systemd-invoke ask it before starting a unit); one already there (a container image's) is left
// as it is.
import { existsSync, rmSync, writeFileSync } from "node:fs";

const policy = "/usr/sbin/policy-rc.d";

/**
 * Puts a policy-rc.d that forbids service starts in place unless one is there; answers the function
 * that removes it again (a no-op when it was there before).
 * @returns {() => void}
 */
export function holdServiceStarts() {
  if (existsSync(policy)) return () => {};
  writeFileSync(
    policy,
    "#!/bin/sh\n# Put here for a package install by RustStream's test tooling; removed after it.\nexit 101\n",
    { mode: 0o755 },
  );
  return () => rmSync(policy, { force: true });
}
