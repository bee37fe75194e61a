import { RustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import { NatsBroker } from "../src/index.js";

// The broker's time options are checked when it is built, before any I/O.

describe("NatsBroker's API time options", () => {
  for (const name of ["apiTimeoutMs", "apiRetryWithinMs"] as const) {
    for (const value of [0, -1, 1.5, Number.NaN]) {
      it(`refuses ${name}: ${value}, naming it`, () => {
        const build = () => new NatsBroker({ servers: "nats://127.0.0.1:4222", [name]: value });
        expect(build).toThrow(RustStreamError);
        expect(build).toThrow(new RegExp(`^${name}: ${value}; give a whole number, 1 or more`));
      });
    }
    it(`takes ${name}: 1000`, () => {
      expect(new NatsBroker({ servers: "nats://127.0.0.1:4222", [name]: 1000 })).toBeInstanceOf(
        NatsBroker,
      );
    });
  }
});
