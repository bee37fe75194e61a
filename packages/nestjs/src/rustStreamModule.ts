import { type DynamicModule, Module, type Provider } from "@nestjs/common";
import { DiscoveryModule } from "@nestjs/core";
import {
  moduleOptionsToken,
  type RustStreamModuleAsyncOptions,
  type RustStreamModuleOptions,
} from "./moduleOptions.js";
import { RustStreamHost } from "./rustStreamHost.js";
import { assertServiceOptions } from "./serviceApp.js";

/**
 * A RustStream app inside a Nest application: `imports: [RustStreamModule.forRoot({ broker, name })]`,
 * and `@Subscriber(source, options)` on methods of the application's providers, which keep their
 * dependency injection. Global: `RustStreamHost` (the app) can be injected anywhere.
 */
@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest dynamic module is a class with static forRoot methods.
export class RustStreamModule {
  static forRoot(options: RustStreamModuleOptions): DynamicModule {
    assertServiceOptions("RustStreamModule.forRoot", options);
    return rustStreamModule([], { provide: moduleOptionsToken, useValue: options });
  }

  /** The options from a factory, with what it injects (read when the application starts). */
  static forRootAsync(options: RustStreamModuleAsyncOptions): DynamicModule {
    return rustStreamModule([...(options.imports ?? [])], {
      provide: moduleOptionsToken,
      inject: [...(options.inject ?? [])],
      useFactory: async (...args: never[]) => {
        const made = await options.useFactory(...args);
        assertServiceOptions("RustStreamModule.forRootAsync's useFactory", made);
        return made;
      },
    });
  }
}

function rustStreamModule(
  imports: NonNullable<DynamicModule["imports"]>,
  options: Provider,
): DynamicModule {
  return {
    module: RustStreamModule,
    global: true,
    imports: [DiscoveryModule, ...imports],
    providers: [options, RustStreamHost],
    exports: [RustStreamHost],
  };
}
