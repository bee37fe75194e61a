import { type Broker, supportsDescribeServer } from "@ruststream/core";
import { expect } from "vitest";
import { uniqueName } from "../helpers/uniqueName.js";
import type { AnyConnected, SourceOf } from "./harness.js";
import { registerSuite, type Scenario } from "./scenario.js";

export interface CredentialsFactories<TConnected extends AnyConnected> {
  /** A broker whose configuration holds `secret` as a password, token or key. */
  readonly makeBroker: (secret: string) => Broker<TConnected>;
  readonly makeSource: (name: string) => SourceOf<TConnected>;
}

interface CredentialsContext {
  readonly makeBroker: (secret: string) => Broker<AnyConnected>;
  readonly makeSource: (name: string) => object;
}

function serialise(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === "bigint" ? inner.toString() : inner,
  );
}

export const credentialsScenarios: readonly Scenario<CredentialsContext>[] = [
  {
    name: "the server description, descriptors and policies carry no credentials",
    run: async ({ makeBroker, makeSource }) => {
      const secret = `s3cret${uniqueName("pw").replaceAll("-", "")}`;
      const broker = makeBroker(secret);
      // Docs are generated from an app that never connected: the broker describes its server first.
      expect(supportsDescribeServer(broker), "the broker describes its server").toBe(true);
      const before = supportsDescribeServer(broker) ? broker.describeServer() : undefined;
      expect(serialise(before)).not.toContain(secret);
      const connected = await broker.connect();
      try {
        expect(supportsDescribeServer(connected), "the connection describes its server").toBe(true);
        if (supportsDescribeServer(connected)) {
          const after = connected.describeServer();
          expect(serialise(after)).not.toContain(secret);
          // Connecting may learn more (the server's version), never a different server.
          expect(after, "the same server before and after connecting").toMatchObject(before ?? {});
        }
        expect(serialise(makeSource(uniqueName("creds")))).not.toContain(secret);
        expect(serialise(connected.defaultPublishPolicy())).not.toContain(secret);
      } finally {
        await connected.shutdown();
      }
    },
  },
];

/** Registers the check that nothing meant for generated docs leaks a credential. */
export function credentials<TConnected extends AnyConnected>(
  factories: CredentialsFactories<TConnected>,
): void {
  const context = factories as unknown as CredentialsContext;
  registerSuite("no credentials in descriptions", credentialsScenarios, context, undefined, 30_000);
}
