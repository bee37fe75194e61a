import { type Broker, supportsDescribeServer } from "@ruststream/core";
import { expect } from "vitest";
import type { AnyConnected, SourceOf } from "./harness.js";
import { uniqueName } from "./helpers.js";
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
      const connected = await makeBroker(secret).connect();
      try {
        if (supportsDescribeServer(connected)) {
          expect(serialise(connected.describeServer())).not.toContain(secret);
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
