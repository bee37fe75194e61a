import type { PublishPolicy } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import { FilePublisher, type PublisherHost } from "./publisher.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "file", label: "file", broker: "FileBroker" };

/**
 * Publishing to the broker's file: the message name is the stream key. Configuration only; the
 * file's writer (and its cross-process lock) is taken on the first publish, so a service that
 * only reads never holds it. It takes any connection and checks the brand, rather than naming the
 * connection's class, which would tie this file to connection.ts and back.
 */
export class FilePublish implements PublishPolicy<object, FilePublisher> {
  readonly [policyMark] = "file";

  async pair(connected: object): Promise<FilePublisher> {
    const host = pairedHost<PublisherHost>(connected, owner, "append");
    host.assertOpen();
    return new FilePublisher(host);
  }
}
