import type { PublishPolicy } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import { PostgresPublisher, type PublisherHost } from "./publisher.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "postgres", label: "PostgreSQL", broker: "PostgresBroker" };

/** The publish policy: configuration only, paired with a connection at startup. */
export class PostgresPublish implements PublishPolicy<object, PostgresPublisher> {
  readonly [policyMark] = "postgres";

  async pair(connected: object): Promise<PostgresPublisher> {
    const host = pairedHost<PublisherHost>(connected, owner, "recordRow");
    host.assertOpen();
    return new PostgresPublisher(host);
  }
}
