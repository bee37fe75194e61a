import type { Bindings } from "@ruststream/core";
import type { BindingsObject, SchemaObject } from "../document.js";
import { kafkaBindings } from "./kafkaBindings.js";
import type { ProtocolBindings } from "./protocolBindings.js";
import { pulsarBindings } from "./pulsarBindings.js";

/**
 * The protocols whose AsyncAPI bindings have fields for what RustStream knows. Redis has a binding
 * name and no fields yet (asyncapi/bindings redis is reserved for future use), and the memory and
 * file brokers have none, so their facts are kept in `x-ruststream-bindings` alone.
 */
const protocols: Readonly<Record<string, ProtocolBindings>> = {
  kafka: kafkaBindings,
  pulsar: pulsarBindings,
};

function one(protocol: string, binding: SchemaObject | undefined): BindingsObject | undefined {
  return binding === undefined ? undefined : { [protocol]: binding };
}

/** The channel bindings of `address` on a broker of `kind`. */
export function channelBindings(kind: string, address: string): BindingsObject | undefined {
  return one(kind, protocols[kind]?.channel(address));
}

/** The bindings of every message on a broker of `kind`. */
export function messageBindings(kind: string): BindingsObject | undefined {
  return one(kind, protocols[kind]?.message());
}

/** What a descriptor's bindings say, split into AsyncAPI's bindings and the facts they leave. */
export interface SourceBindings {
  readonly operation: BindingsObject | undefined;
  readonly unmapped: BindingsObject | undefined;
  readonly retryDestination: string | undefined;
}

export function sourceBindings(bindings: Bindings | undefined): SourceBindings {
  const operation: Record<string, SchemaObject> = {};
  const unmapped: Record<string, SchemaObject> = {};
  let retryDestination: string | undefined;
  for (const [protocol, facts] of Object.entries(bindings ?? {})) {
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
