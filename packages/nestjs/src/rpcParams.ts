import type { ExternalContextCreator } from "@nestjs/core";

type ParamsFactory = NonNullable<Parameters<ExternalContextCreator["create"]>[4]>;

/**
 * Where Nest's parameter decorators record a method's parameters (`ROUTE_ARGS_METADATA`, which
 * `@Payload()` and `@Ctx()` write as `PARAM_ARGS_METADATA`), kept out of both packages' indexes.
 */
export const paramsMetadataKey = "__routeArguments__";

// Nest's RpcParamtype values (@nestjs/microservices keeps the enum out of its public index): what
// `@Payload()` and `@Ctx()` record on a parameter.
const payloadParam = 3;
const contextParam = 6;

/**
 * Nest's `@Payload(property?)` and `@Ctx()` for a RustStream handler, whose arguments are the
 * payload and its `RustStreamContext`, as a microservice handler's are.
 */
export const rpcParams: ParamsFactory = {
  exchangeKeyForValue(type: number, data: unknown, args: unknown[]): unknown {
    if (type === payloadParam) {
      const payload = args[0];
      return typeof data === "string" &&
        data !== "" &&
        typeof payload === "object" &&
        payload !== null
        ? (payload as Record<string, unknown>)[data]
        : payload;
    }
    if (type === contextParam) return args[1];
    return undefined;
  },
};
