// The Nest microservice every Nest row of bench:nestjs serves: one controller with one
// `@EventPattern` handler, as Nest's documentation writes it, whose whole work is every row's (the
// tally notes the order's id). The pattern is the topic; `extras` are the decorator's own (our
// strategy reads a pattern's subscriber options from `extras.ruststream`; Nest's Kafka transport
// reads none), so both transports serve this one class.
import { Controller, Module, type Type } from "@nestjs/common";
import { EventPattern, Payload } from "@nestjs/microservices";
import type { Tally } from "../kafka/tally.js";
import type { Order } from "../redis/drain/order.js";

export function ordersModule(
  topic: string,
  tally: Tally,
  extras: Readonly<Record<string, unknown>> = {},
): Type {
  @Controller()
  class OrdersController {
    @EventPattern<string>(topic, extras)
    handleOrderCreated(@Payload() order: Order): void {
      tally.add(order);
    }
  }

  @Module({ controllers: [OrdersController] })
  class OrdersModule {}

  return OrdersModule;
}
