import type { Bindings } from "@ruststream/core";
import type { BindingsObject, SchemaObject } from "../document.js";
import { amqpBindings } from "./amqpBindings.js";
import { kafkaBindings } from "./kafkaBindings.js";
import { natsBindings } from "./natsBindings.js";
import type { ProtocolBindings } from "./protocolBindings.js";
import { pulsarBindings } from "./pulsarBindings.js";

/**
 * The protocols whose AsyncAPI bindings have fields for what RustStream knows. Redis has a binding
 * name and no fields yet (asyncapi/bindings redis is reserved for future use), and the memory and
 * file brokers have none, so their facts are kept in `x-ruststream-bindings` alone.
 */
const protocols: Readonly<Record<string, ProtocolBindings>> = {
  amqp: amqpBindings,
  kafka: kafkaBindings,
  nats: natsBindings,
  pulsar: pulsarBindings,
};

function one(protocol: string, binding: SchemaObject | undefined): BindingsObject | undefined {
  return binding === undefined ? undefined : { [protocol]: binding };
}

/**
 * The channel bindings of `address` on a broker of `kind`, from the bindings of the descriptor a
 * subscriber reads it through, where one does.
 */
export function channelBindings(
  kind: string,
  address: string,
  source: Bindings | undefined,
): BindingsObject | undefined {
  const protocol = protocolOf(kind);
  return one(protocol, protocols[protocol]?.channel(address, source?.[protocol]));
}

/** The bindings of every message on a broker of `kind`. */
export function messageBindings(kind: string): BindingsObject | undefined {
  const protocol = protocolOf(kind);
  return one(protocol, protocols[protocol]?.message());
}

/**
 * The AsyncAPI protocol of a broker kind: its own name, but RabbitMQ's, which speaks AMQP 0.9.1
 * (the binding AsyncAPI names `amqp`, the key its descriptors state their facts under).
 */
function protocolOf(kind: string): string {
  return kind === "rabbitmq" ? "amqp" : kind;
}

/** What a descriptor's bindings say, split into AsyncAPI's bindings and the facts they leave. */
export interface SourceBindings {
  readonly operation: BindingsObject | undefined;
  readonly unmapped: BindingsObject | undefined;
  readonly retryDestination: string | undefined;
}

/**
 * The receive operation's bindings on a broker of `kind`, from the bindings of the descriptor it
 * reads through. The broker's own protocol is asked even where the source states nothing (a bare
 * name), since some of its operation's facts hold for every subscription (AMQP's acks).
 */
export function sourceBindings(kind: string, bindings: Bindings | undefined): SourceBindings {
  const operation: Record<string, SchemaObject> = {};
  const unmapped: Record<string, SchemaObject> = {};
  let retryDestination: string | undefined;
  const own = protocolOf(kind);
  // Only a protocol with AsyncAPI bindings is asked on a bare name: the others' nothing stays out.
  const stated: Record<string, SchemaObject> = {
    ...(protocols[own] === undefined ? {} : { [own]: {} }),
    ...bindings,
  };
  for (const [protocol, facts] of Object.entries(stated)) {
    const mapper = protocols[protocol];
    const binding = mapper?.operation(facts);
    if (binding !== undefined) operation[protocol] = binding;
    const rest = mapper === undefined ? facts : mapper.unmapped(facts);
    if (rest !== undefined) unmapped[protocol] = rest;
    retryDestination ??= mapper?.retryDestination(facts);
  }
  return {
    operation: Object.keys(operation).length === 0 ? undefined : operation,
    unmapped: Object.keys(unmapped).length === 0 ? undefined : unmapped,
    retryDestination,
  };
}
