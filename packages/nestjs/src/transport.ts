/**
 * The transport's id: `@EventPattern("orders", rustStreamTransport)` binds a handler to this
 * transport alone in a hybrid application (a handler without one is served by every transport).
 */
export const rustStreamTransport: unique symbol = Symbol.for("@ruststream/nestjs");
