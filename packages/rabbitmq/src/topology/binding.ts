import { type JsonValue, RustStreamError } from "@ruststream/core";
import type { BindingSpec, Table, Topology } from "./topology.js";

/** Something with an exchange's name and, when this package describes it, its topology. */
export interface ExchangeRef {
  readonly name: string;
  topology(): Topology;
}

/**
 * A binding of a queue (or an exchange) to an exchange: by routing key (a direct exchange's key, a
 * topic exchange's pattern, a consistent-hash exchange's weight), or by headers on a headers
 * exchange (`match` all of them, the default, or any).
 */
export interface RabbitBinding {
  /** An exchange this package describes (declared or checked with it), or the name of one. */
  readonly exchange: ExchangeRef | string;
  readonly routingKey?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly match?: "all" | "any";
}

/** The binding's spec, and the topology of its exchange where this package describes it. */
export function bindingSpec(
  binding: RabbitBinding,
  destination: string,
  destinationKind: "queue" | "exchange",
): { readonly spec: BindingSpec; readonly exchange: Topology | undefined } {
  if (typeof binding !== "object" || binding === null) {
    throw new RustStreamError(
      "invalid-argument",
      `a binding of ${destinationKind} "${destination}" must be an object: { exchange, routingKey }`,
    );
  }
  const source = typeof binding.exchange === "string" ? binding.exchange : binding.exchange?.name;
  if (typeof source !== "string" || source === "") {
    throw new RustStreamError(
      "invalid-argument",
      `a binding of ${destinationKind} "${destination}" needs an exchange (the default exchange routes to every queue by its name already)`,
    );
  }
  if (binding.match !== undefined && binding.match !== "all" && binding.match !== "any") {
    throw new RustStreamError(
      "invalid-argument",
      `match: ${String(binding.match)}; give "all" or "any"`,
    );
  }
  const args: Table =
    binding.headers === undefined ? {} : { "x-match": binding.match ?? "all", ...binding.headers };
  return {
    spec: {
      source,
      destination,
      destinationKind,
      routingKey: binding.routingKey ?? "",
      arguments: args,
    },
    exchange: typeof binding.exchange === "string" ? undefined : binding.exchange.topology(),
  };
}

/**
 * A binding as generated docs describe it: the exchange's name (and type, where this package
 * describes the exchange), and the routing key or the headers it matches.
 */
export function bindingFacts(binding: RabbitBinding): { readonly [key: string]: JsonValue } {
  const exchange = typeof binding.exchange === "string" ? binding.exchange : binding.exchange.name;
  const type =
    typeof binding.exchange === "string"
      ? undefined
      : binding.exchange.topology().exchanges.find((e) => e.name === exchange)?.type;
  return {
    exchange,
    ...(type === undefined ? {} : { exchangeType: type }),
    ...(binding.headers === undefined
      ? { routingKey: binding.routingKey ?? "" }
      : { headers: { ...binding.headers }, match: binding.match ?? "all" }),
  };
}
