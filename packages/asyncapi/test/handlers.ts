import type { AsyncAPIDocumentInterface } from "@asyncapi/parser";
import type { AppDescription } from "@ruststream/core";
import { expect } from "vitest";

/** The property names of a message's payload, as the parser resolved it; `undefined` without one. */
export function payloadFields(
  parsed: AsyncAPIDocumentInterface,
  operationId: string,
): string[] | undefined {
  const message = parsed.operations().get(operationId)?.messages().all()[0];
  const properties = message?.payload()?.properties();
  return properties === undefined ? undefined : Object.keys(properties);
}

/**
 * Holds the parsed document against what the app mounts: for every subscriber a `receive`
 * operation on its source's channel, its payload's fields as its schema states them, its reply
 * (channel, or reply-to address), a `send` to each `ctx.out` destination and to its dead letter,
 * one message per media type it decodes (its codec's and its `codecs`'), and the retry
 * extension's cap and dead letter.
 */
export function expectMatchesHandlers(
  parsed: AsyncAPIDocumentInterface,
  description: AppDescription,
): void {
  const sends = parsed.operations().filterBySend();
  const sendsTo = (address: string) =>
    sends.filter((op) =>
      op
        .channels()
        .all()
        .some((c) => c.address() === address),
    );
  for (const broker of description.brokers) {
    for (const subscriber of broker.subscribers) {
      const id = `receive_${subscriber.name.replace(/[^\w.-]/g, "_")}`;
      const operation = parsed.operations().get(id);
      expect(operation, `operation ${id}`).toBeDefined();
      if (operation === undefined) continue;
      expect(operation.action()).toBe("receive");
      expect(
        operation
          .channels()
          .all()
          .map((c) => c.address()),
      ).toEqual([subscriber.source.name]);
      // One message per media type the subscriber decodes, its codec's first.
      const contentTypes = [
        subscriber.message.contentType,
        ...(subscriber.message.otherContentTypes ?? []),
      ];
      expect(
        operation
          .messages()
          .all()
          .map((m) => m.contentType()),
      ).toEqual(contentTypes);
      expect(
        operation
          .tags()
          .all()
          .map((t) => t.name()),
      ).toEqual([broker.kind]);

      const properties = subscriber.message.schema?.jsonSchema?.properties;
      const fields =
        typeof properties === "object" && properties !== null ? Object.keys(properties) : undefined;
      expect(payloadFields(parsed, id), `payload of ${subscriber.name}`).toEqual(fields);

      const reply = operation.reply();
      if (subscriber.reply === undefined) {
        expect(reply, `reply of ${subscriber.name}`).toBeUndefined();
      } else if (subscriber.reply.name === undefined) {
        expect(reply?.address()?.location()).toBe("$message.header#/reply-to");
        expect(reply?.channel()?.address()).toBeNull();
      } else {
        expect(reply?.channel()?.address()).toBe(subscriber.reply.name);
        expect(reply?.messages().all()).toHaveLength(1);
      }

      for (const out of Object.values(subscriber.publishes)) {
        if (out.name !== undefined)
          expect(sendsTo(out.name), `send to ${out.name}`).toHaveLength(1);
      }
      const retry = operation.extensions().get("x-ruststream-retry")?.value() as
        | { maxAttempts: number; deadLetter?: string; backoff: unknown }
        | undefined;
      expect(retry?.maxAttempts).toBe(subscriber.maxAttempts);
      expect(retry?.backoff).toEqual(subscriber.failure.backoff);
      expect(retry?.deadLetter).toBe(subscriber.deadLetter);
      if (subscriber.deadLetter !== undefined) {
        const deadLetters = sendsTo(subscriber.deadLetter);
        expect(deadLetters, `send to ${subscriber.deadLetter}`).toHaveLength(1);
        // The dead-lettered copy is the message as it arrived, in whichever media type.
        expect(
          deadLetters[0]
            ?.messages()
            .all()
            .map((m) => m.id()),
        ).toEqual(
          operation
            .messages()
            .all()
            .map((m) => m.id()),
        );
      }
    }
  }
}
