import type { RustStreamError } from "@ruststream/core";
import type { Channel, ChannelModel } from "amqplib";
import { topologyRefusal } from "../topology/refusal.js";
import type { BindingSpec, ExchangeSpec, QueueSpec, Topology } from "../topology/topology.js";
import { refusalOf } from "./serverError.js";

// Declaring and checking a topology over amqplib. A check never creates anything and never leaves
// the caller's channels closed: each question goes on a throwaway channel, since the server answers
// a missing or differently declared queue by closing the channel it was asked on. First a passive
// declare (does it exist?), then, for what exists, the same declaration made actively: the server
// accepts it only when every property and argument is equal, and otherwise names the difference.

/** Declares every exchange, queue and binding of `topology` (idempotent on an equal topology). */
export async function declareTopology(model: ChannelModel, topology: Topology): Promise<void> {
  const channel = await model.createChannel();
  channel.on("error", () => {});
  try {
    for (const exchange of topology.exchanges) {
      await ask(channel, `declaring exchange "${exchange.name}"`, () =>
        assertExchange(channel, exchange),
      );
    }
    for (const queue of topology.queues) {
      await ask(channel, `declaring queue "${queue.name}"`, () => assertQueue(channel, queue));
    }
    for (const binding of topology.bindings) {
      await ask(channel, `binding ${describeBinding(binding)}`, () => bind(channel, binding));
    }
  } finally {
    await channel.close().catch(() => {});
  }
}

/** Checks that the server has `topology` as given; rejects naming what is missing or different. */
export async function checkTopology(model: ChannelModel, topology: Topology): Promise<void> {
  for (const exchange of topology.exchanges) {
    if (exchange.name === "" || exchange.name.startsWith("amq.")) continue;
    await throwaway(model, `exchange "${exchange.name}"`, (c) => c.checkExchange(exchange.name));
    await throwaway(model, `exchange "${exchange.name}"`, (c) => assertExchange(c, exchange));
  }
  for (const queue of topology.queues) {
    await throwaway(model, `queue "${queue.name}"`, (c) => c.checkQueue(queue.name));
    await throwaway(model, `queue "${queue.name}"`, (c) => assertQueue(c, queue));
  }
  // AMQP 0.9.1 has no way to ask for a binding: the bindings of a checked topology are the
  // operator's to keep (the README says so).
}

async function throwaway(
  model: ChannelModel,
  what: string,
  question: (channel: Channel) => Promise<unknown>,
): Promise<void> {
  const channel = await model.createChannel();
  channel.on("error", () => {});
  try {
    await question(channel);
  } catch (error) {
    throw differenceError(what, error);
  } finally {
    await channel.close().catch(() => {});
  }
}

async function ask(_channel: Channel, what: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    throw differenceError(what, error);
  }
}

/** The server's refusal as the error a service author can act on. */
function differenceError(what: string, error: unknown): RustStreamError {
  const refusal = refusalOf(error);
  return topologyRefusal(what, refusal.code, refusal.text, error);
}

function assertExchange(channel: Channel, exchange: ExchangeSpec) {
  return channel.assertExchange(exchange.name, exchange.type, {
    durable: exchange.durable,
    autoDelete: exchange.autoDelete,
    internal: exchange.internal,
    arguments: exchange.arguments,
  });
}

function assertQueue(channel: Channel, queue: QueueSpec) {
  return channel.assertQueue(queue.name, {
    durable: queue.durable,
    exclusive: queue.exclusive,
    autoDelete: queue.autoDelete,
    arguments: queue.arguments,
  });
}

function bind(channel: Channel, binding: BindingSpec) {
  return binding.destinationKind === "queue"
    ? channel.bindQueue(binding.destination, binding.source, binding.routingKey, binding.arguments)
    : channel.bindExchange(
        binding.destination,
        binding.source,
        binding.routingKey,
        binding.arguments,
      );
}

function describeBinding(binding: BindingSpec): string {
  return `${binding.destinationKind} "${binding.destination}" to exchange "${binding.source}" (${binding.routingKey === "" ? "no routing key" : `key "${binding.routingKey}"`})`;
}
