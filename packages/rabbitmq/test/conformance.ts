import { execFileSync } from "node:child_process";
import type { Broker } from "@ruststream/core";
import { type Capabilities, conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit/brokers";
import { afterAll } from "vitest";
import {
  type ConnectedRabbitBroker,
  RabbitBroker,
  RabbitPosition,
  RabbitPublish,
  type RabbitSource,
} from "../src/index.js";

/** Every suite that fits a queue, against `makeBroker`'s clients, for one queue type. */
export function everySuite(
  makeBroker: () => Broker<ConnectedRabbitBroker>,
  makeSource: (name: string) => RabbitSource,
  capabilities: Capabilities,
  timing: { arrivalMs: number; silenceMs: number },
): void {
  const factories = {
    makeBroker,
    makeSource,
    capabilities,
    timing,
    // Without `mandatory`: the backlog scenario publishes to a queue no subscription declared yet,
    // which RabbitMQ routes nowhere (the default publisher refuses that, tested on its own).
    makePublisher: (connected: ConnectedRabbitBroker) =>
      new RabbitPublish({ mandatory: false }).pair(connected),
    // Far past anything a test writes: a stream refuses a seek to an offset it has not written.
    unknownPosition: (subscription: { readonly name: string }) =>
      new RabbitPosition(subscription.name, 0, 10n ** 15n),
  };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking(factories);
  conformance.transactions(factories);
  conformance.requestReply(factories);
  const source = makeSource("probe");
  if (source.copies === "broker") conformance.brokerMovedRetry(factories);
  else conformance.redeliveryAddress(factories);
}

/** The queues a run of the suites made on the real node, deleted after it. */
export function recordingQueues(
  make: (name: string) => RabbitSource,
): (name: string) => RabbitSource {
  const made = new Set<string>();
  afterAll(async () => {
    for (const name of made) {
      for (const queue of [name, `${name}-dlq`]) {
        await fetch(
          `${requireEnv("RABBITMQ_MANAGEMENT_URL")}/api/queues/%2F/${encodeURIComponent(queue)}`,
          {
            method: "DELETE",
            headers: { authorization: basicAuth() },
          },
        ).catch(() => {});
      }
    }
  });
  return (name) => {
    made.add(name);
    return make(name);
  };
}

function basicAuth(): string {
  return `Basic ${Buffer.from(`${requireEnv("RABBITMQ_USERNAME")}:${requireEnv("RABBITMQ_PASSWORD")}`).toString("base64")}`;
}

/**
 * The credentials suite on the real node: a user made for the suite's secret (through the
 * management API, synchronously, since the suite builds its broker so), and a real connection.
 */
export function credentialsSuite(makeSource: (name: string) => RabbitSource): void {
  conformance.credentials({
    makeBroker: (secret) => {
      const user = `creds-${secret.slice(-12)}`;
      const api = requireEnv("RABBITMQ_MANAGEMENT_URL");
      const script = `
        const [api, auth, user, password] = process.argv.slice(1);
        const put = (path, body) => fetch(api + path, { method: "PUT", headers: { authorization: auth, "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => { if (!r.ok) throw new Error(path + " " + r.status); });
        await put("/api/users/" + user, { password, tags: "" });
        await put("/api/permissions/%2F/" + user, { configure: ".*", write: ".*", read: ".*" });`;
      execFileSync(process.execPath, [
        "--input-type=module",
        "-e",
        script,
        api,
        basicAuth(),
        user,
        secret,
      ]);
      const url = new URL(requireEnv("RABBITMQ_URL"));
      url.username = user;
      url.password = secret;
      return new RabbitBroker({ url: url.toString() });
    },
    makeSource,
  });
}
